import type { Config } from '../config';
import type { Logger } from '../ops/logger';
import { databasesOf, type Entity, type EntityCatalogue } from '../core/entity-catalogue';
import { openDatabases } from '../db/databases';
import { grantServiceAccess } from '../db/apply-service-grants';
import { optionalGlobalGrants } from '../db/service-grants';
import { describeWider, revokeWider } from '../db/privilege-check';
import { migrateLatest } from '../db/migrate-latest';
import { grantHeartbeatReader } from '../db/sql/grant-heartbeat-reader';
import { createArchiveTable } from '../db/sql/create-archive-table';

/**
 * Every database the entities file names gets timebucket's tables (an entity's transitions write
 * their events into the outbox of the entity's own database, in the same transaction); the demo
 * tables only ever on the main one, and only locally; the archive tables an entity declares, where
 * missing (db/sql/create-archive-table.ts). Then, with TB_DB_SERVICE_USER, each
 * database's grants, and the revokes of what an earlier entities file needed (db/apply-service-grants.ts);
 * a privilege wider than the file needs that migrate did not grant is reported, not revoked.
 * With a replica configured (TB_DB_REPLICA_USER), its reader account gets SELECT on
 * timebucket_heartbeat, its only privilege (the grant replicates).
 */
export async function migrate(config: Config, catalogue: EntityCatalogue, logger: Logger, opts: { down: boolean }): Promise<void> {
  const databases = openDatabases(config, catalogue, logger, { demoTables: config.env === 'local', migrate: true });
  try {
    for (const name of databasesOf(catalogue)) {
      const db = databases.pools[name]!;
      const log = logger.child({ database: name });
      if (opts.down) {
        const [, rolledBack] = (await db.migrate.rollback(undefined, true)) as [number, string[]];
        log.info({ rolledBack }, 'migrations rolled back');
        continue;
      }
      const applied = await migrateLatest(db, { logger: log });
      log.info({ applied }, applied.length > 0 ? 'migrations applied' : 'database already up to date');
      for (const { entity, hot, archive } of archiveTablesOf(catalogue, name)) {
        if (await createArchiveTable(db, hot, archive, entity.idColumn)) log.info({ entity: entity.name, hot, archive }, 'archive table created');
      }
      const replica = config.replicas.byDatabase[name];
      if (replica !== undefined) {
        const statement = await grantHeartbeatReader(db, config.databases[name]!.database, { user: replica.user, host: '%' });
        log.info({ statement }, 'replica reader granted SELECT on timebucket_heartbeat, and nothing more');
      }
      const account = config.migrate.serviceAccount;
      if (account !== undefined) {
        const { granted, revoked, notRevoked } = await grantServiceAccess(
          db,
          config.databases[name]!.database,
          account,
          catalogue,
          name,
          optionalGlobalGrants(config.pacing),
        );
        const who = `${account.user}@${account.host}`;
        log.info({ account: who, grants: granted, revoked }, 'service user granted what the service needs, and no more');
        if (notRevoked === undefined) {
          log.info(
            { account: who },
            'migrate cannot see the grants it did not make (the owner needs SELECT on the mysql schema to read them): run `timebucket check` as the service user, it names any privilege wider than needed',
          );
        } else if (notRevoked.length > 0) {
          const sqlAccount = `'${account.user}'@'${account.host}'`;
          log.warn(
            { account: who, notRevoked: notRevoked.map(describeWider), revokeWith: notRevoked.map((w) => revokeWider(w, sqlAccount)) },
            `the service user holds privileges wider than the entities file needs, which migrate did not grant and so does not revoke (they are a DBA's): ${notRevoked.map(describeWider).join('; ')}`,
          );
        }
      }
    }
  } finally {
    await databases.destroy();
  }
}

/** The archive tables of the entities that declare one, on `database`: hot table → archive table. */
function archiveTablesOf(catalogue: EntityCatalogue, database: string): Array<{ entity: Entity; hot: string; archive: string }> {
  return catalogue.entities.flatMap((entity) =>
    (entity.archive?.tables ?? []).filter((t) => t.hot.database === database).map((t) => ({ entity, hot: t.hot.table, archive: t.archive.table })),
  );
}
