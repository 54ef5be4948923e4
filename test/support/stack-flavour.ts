/**
 * Which server the stack's database servers run (TB_DB_FLAVOUR, stack/lib/db-flavour.sh):
 * mariadb, mysql, or mixed (server 1 MariaDB, server 2 MySQL). Tests use it where the two
 * servers rightly answer differently (how information_schema prints a type, a plan's JSON), and
 * to reach a server's files (its socket, its pid) by its stack name.
 */
export type StackFlavour = 'mariadb' | 'mysql';

export function stackFlavour(server: 1 | 2 = 1): StackFlavour {
  const setting = process.env['TB_DB_FLAVOUR'] ?? 'mariadb';
  if (setting === 'mixed') return server === 1 ? 'mariadb' : 'mysql';
  if (setting !== 'mariadb' && setting !== 'mysql') throw new Error(`TB_DB_FLAVOUR must be mariadb, mysql or mixed (is ${setting})`);
  return setting;
}

/** The stack's name of server `server` (its run/<name>.pid and run/<name>.sock): mariadb, mariadb-2, mysql, mysql-2. */
export function stackServerName(server: 1 | 2): string {
  return server === 1 ? stackFlavour(1) : `${stackFlavour(2)}-2`;
}

/**
 * An integer column's type as information_schema.COLUMNS prints it: MariaDB with its display
 * width (`bigint(20)`, `tinyint(3) unsigned`), MySQL 8.0.19 and later without (`bigint`).
 */
export function integerColumnType(type: string, width: number, server: 1 | 2 = 1): string {
  const [base, ...rest] = type.split(' ');
  return stackFlavour(server) === 'mysql' ? type : [`${base}(${width})`, ...rest].join(' ');
}

/**
 * `sql` (one UPDATE, DELETE or SELECT) waiting at most `seconds` for a row lock, for this statement
 * alone (a pooled session keeps its own setting): MariaDB's SET STATEMENT … FOR, MySQL's SET_VAR
 * optimizer hint after the statement's first keyword.
 */
export function withLockWait(sql: string, seconds: number, server: 1 | 2 = 1): string {
  if (stackFlavour(server) === 'mariadb') return `SET STATEMENT innodb_lock_wait_timeout = ${seconds} FOR ${sql}`;
  return sql.replace(/^\s*(\w+)/, `$1 /*+ SET_VAR(innodb_lock_wait_timeout = ${seconds}) */`);
}

/** The connector's `database.ssl.mode` that verifies the certificate and the host name: MariaDB's connector spells it verify-full, MySQL's verify_identity. */
export function verifyingSslMode(server: 1 | 2 = 1): string {
  return stackFlavour(server) === 'mysql' ? 'verify_identity' : 'verify-full';
}
