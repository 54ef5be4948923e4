/**
 * The names and binlog server ids of a deployment's connectors, derived from the deployment
 * (TB_GROUP_PREFIX) and the database, so that two deployments never collide: on one Connect
 * cluster a second connector of the same name replaces the first's configuration, and on one
 * database server a second binlog reader with the same server id disconnects the first.
 *
 *   name       <group prefix>-cdc | <group prefix>-outbox, then -<database> but for main
 *   server id  400000 + FNV-1a(<group prefix>/<kind>/<schema>) mod 2^31: within MySQL's and
 *              MariaDB's range, clear of the small ids replicas are usually given
 */
export type ConnectorKind = 'cdc' | 'outbox';

export function connectorName(groupPrefix: string, kind: ConnectorKind, database: string): string {
  return database === 'main' ? `${groupPrefix}-${kind}` : `${groupPrefix}-${kind}-${database}`;
}

const SERVER_ID_BASE = 400_000;

export function derivedServerId(groupPrefix: string, kind: ConnectorKind, schema: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(`${groupPrefix}/${kind}/${schema}`, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return SERVER_ID_BASE + (hash % 2 ** 31);
}
