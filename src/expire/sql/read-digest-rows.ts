/**
 * A digest's rows: every row of the given users still in a from-state whose fire point falls in
 * the window, due after the database's now. Read through the digest's index (first column the
 * user), without a lock, so the digest lists what the table holds at its commit whichever of
 * the users' entries triggered it.
 *
 *   SELECT user, id, status, due, <item columns> FROM t FORCE INDEX (<index>)
 *     WHERE user IN (…) AND status IN (from…) AND due >= ? AND due < ? AND due > ?
 */
import type { Knex } from 'knex';
import type { Entity, Location, Transition } from '../../core/entity-catalogue';
import type { ReadRow } from '../../core/expiry-plan';
import { dueValueOf } from '../../db/due-value';
import { bigintString } from '../../db/bigint-string';
import { quoteId } from '../../db/quote-id';
import { rowsDecoder, type FieldInfo } from '../row-values';

export type DigestRows = ReadonlyMap<string, ReadRow[]>;

export type ReadDigestRows = Readonly<{
  sql: string;
  /** Rows by user, of the users given, due in [fromMs, untilMs) and after dbNowMs. */
  run: (trx: Knex.Transaction, users: readonly string[], range: Readonly<{ fromMs: number; untilMs: number; dbNowMs: number }>) => Promise<DigestRows>;
}>;

export function readDigestRows(entity: Entity, t: Transition, location: Location, columns: readonly string[]): ReadDigestRows {
  const digest = t.reminders?.digest;
  if (digest === null || digest === undefined) throw new RangeError(`${t.ref} has no digest`);
  const user = digest.userColumn;
  const select = [...new Set([user, entity.idColumn, entity.status.column, t.due.column, ...columns])].map(quoteId).join(', ');
  const due = quoteId(t.due.column);
  const sql =
    `SELECT ${select} FROM ${quoteId(location.table)} FORCE INDEX (${quoteId(digest.index)})` +
    ` WHERE ${quoteId(user)} IN (?) AND ${quoteId(entity.status.column)} IN (?) AND ${due} >= ? AND ${due} < ? AND ${due} > ?`;
  const decode = rowsDecoder(entity, t, location, columns);
  const userAt = `${location.key}.${user}`;
  return {
    sql,
    run: async (trx, users, range) => {
      const byUser = new Map<string, ReadRow[]>();
      if (users.length === 0) return byUser;
      const bounds = [range.fromMs, range.untilMs, range.dbNowMs].map((ms) => dueValueOf(t.due.kind, ms));
      const [rows, fields] = (await trx.raw(sql, [[...users], [...t.from], ...bounds] as Knex.RawBinding[])) as [
        Array<Record<string, unknown>>,
        FieldInfo[] | undefined,
      ];
      const read = decode(rows, fields);
      rows.forEach((r, i) => {
        const u = bigintString(r[user], userAt);
        const list = byUser.get(u);
        if (list === undefined) byUser.set(u, [read[i]!]);
        else list.push(read[i]!);
      });
      return byUser;
    },
  };
}
