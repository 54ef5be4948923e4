import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-bench/', 'node_modules/', '.stack/', 'coverage/', 'test/deploy/strimzi-model/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Library code logs through the structured logger, never the console.
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // core/ is pure: the rules, the codecs and the planning, with no I/O of its own (a clock and
    // the data come in as arguments), so its unit tests need no stack. Drivers, clients, the
    // file system, the network and every other folder of src stay outside.
    files: ['src/core/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../*', '!../core/*'], message: 'core/ imports only core/: the adapters (kafka, db, ops, …) depend on core, never the other way' },
            {
              group: ['node:fs', 'node:fs/*', 'fs', 'node:net', 'node:http', 'node:https', 'node:child_process', 'node:dns', 'node:os'],
              message: 'core/ does no I/O',
            },
            {
              group: ['kafkajs', '@kafkajs/*', 'knex', 'mysql2', 'mysql2/*', 'pino', 'prom-client', 'opossum'],
              message: 'core/ does no I/O: its callers hand it data',
            },
          ],
        },
      ],
    },
  },
  {
    // The CLI prints its results for people; tests may print diagnostics; an example prints what it receives.
    files: ['src/cli/**', 'test/**', 'bench/**', 'examples/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        module: 'writable',
        require: 'readonly',
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        __dirname: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
        setTimeout: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
