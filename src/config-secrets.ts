/**
 * Secrets from files, as Kubernetes mounts them: TB_DB_PASSWORD_FILE (and the other names in
 * SECRET_FILE_VARIABLES, and each TB_DATABASES database's user and password, and its replica's) is read, its
 * trailing newline dropped, in place of the variable. A file's content never appears in a message.
 */
import { readFileSync } from 'node:fs';
import { splitList } from './config-schema';

/** Variables that may be given as VAR_FILE: a path whose content is the value. */
export const SECRET_FILE_VARIABLES = [
  'TB_DB_USER',
  'TB_DB_PASSWORD',
  'TB_DB_REPLICA_USER',
  'TB_DB_REPLICA_PASSWORD',
  'TB_KAFKA_SASL_USERNAME',
  'TB_KAFKA_SASL_PASSWORD',
  'TB_REGISTRY_USERNAME',
  'TB_REGISTRY_PASSWORD',
] as const;

/** The environment with each VAR_FILE read into VAR; a file that cannot be read, or both given, is a problem. */
export function withSecretFiles(given: Record<string, string | undefined>): { env: Record<string, string | undefined>; problems: string[] } {
  const env = { ...given };
  const problems: string[] = [];
  // Each database of TB_DATABASES has its own user and password, which may come from files too.
  const perDatabase = splitList(given['TB_DATABASES'] ?? '').flatMap((n) => [
    `TB_DB_${n.toUpperCase()}_USER`,
    `TB_DB_${n.toUpperCase()}_PASSWORD`,
    `TB_DB_${n.toUpperCase()}_REPLICA_USER`,
    `TB_DB_${n.toUpperCase()}_REPLICA_PASSWORD`,
  ]);
  for (const name of [...SECRET_FILE_VARIABLES, ...perDatabase]) {
    const path = given[`${name}_FILE`];
    if (path === undefined || path === '') continue;
    if (given[name] !== undefined) {
      problems.push(`${name}_FILE: ${name} is set too; give one of them`);
      continue;
    }
    try {
      env[name] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      // The path is not a secret; the file's content never appears in a message.
      problems.push(`${name}_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return { env, problems };
}
