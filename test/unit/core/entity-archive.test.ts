/**
 * The entities file's archive declaration (issue 44): parsed into the catalogue's Archive, one
 * archive table per hot table, and every rule that keeps a row timebucket may still move out of
 * the archive named at once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../../src/core/errors';
import { entityOf } from '../../../src/core/entity-catalogue';
import { parseEntityFile } from '../../../src/core/entity-file';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Fixture = Record<string, any>;

const defaultText = readFileSync(join(__dirname, '../../../entities/default.json'), 'utf8');
const DAY = 86_400_000;

/** entities/default.json with `archive` on its coupon entity (the order's effect moves LOCKED coupons). */
function withCouponArchive(archive: Fixture, edit: (file: { entities: Fixture[] }) => void = () => undefined): { entities: Fixture[] } {
  const file = JSON.parse(defaultText) as { entities: Fixture[] };
  file.entities.find((e) => e.name === 'coupon')!['archive'] = archive;
  edit(file);
  return file;
}

const couponArchive = {
  finalStates: ['EXPIRED', 'USED', 'INVALID'],
  since: { column: 'expired_at', kind: 'datetime' },
  table: 'coupons_archive',
  index: 'idx_coupons_status_expired_id',
};

function problemsOf(json: unknown): string[] {
  try {
    parseEntityFile(json, 'test.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).details['problems'] as string[];
  }
  throw new Error('expected the file to be refused');
}

/** A seed-style entity on a table set over two databases, its status in Chinese or integer codes. */
function spread(status: Fixture, from: unknown[], to: unknown, archive: Fixture): Fixture {
  return {
    entities: [
      {
        name: 'user_coupon',
        locations: [
          { database: 'main', table: 'user_coupon_{0..1}' },
          { database: 'two', table: 'user_coupon_{2..3}' },
        ],
        id: 'id',
        status,
        transitions: [
          {
            name: 'expired',
            from,
            to,
            due: { column: 'expire_at_ms', kind: 'epoch_ms' },
            index: 'idx_status_expire',
            event: { type: 'USER_COUPON_EXPIRED', ceType: 'shop.coupon.expired', avroName: 'shop.CouponExpired', idField: 'coupon_id', summary: 'expired' },
          },
        ],
        archive,
      },
    ],
  };
}

describe('an archive declared', () => {
  test('parsed with its defaults: 30 days, a budget of 6 hours, the archive beside its hot table', () => {
    const coupon = entityOf(parseEntityFile(withCouponArchive(couponArchive), 'test.json'), 'coupon');
    expect(coupon.archive).toEqual({
      finalStates: ['EXPIRED', 'USED', 'INVALID'],
      since: { column: 'expired_at', kind: 'datetime' },
      afterMs: 30 * DAY,
      budgetMs: 6 * 3_600_000,
      index: 'idx_coupons_status_expired_id',
      tables: [
        {
          hot: { database: 'main', table: 'coupons', key: 'main.coupons' },
          archive: { database: 'main', table: 'coupons_archive', key: 'main.coupons_archive' },
        },
      ],
    });
  });

  test('none declared: null', () => {
    expect(entityOf(parseEntityFile(defaultText, 'default.json'), 'coupon').archive).toBeNull();
  });

  test('a table set over two databases: {table} names one archive per hot table, on its database; a non-ASCII final state, an epoch since column', () => {
    const file = spread({ column: 'status', type: 'string', values: ['待使用', '已使用', '已过期'] }, ['待使用'], '已过期', {
      finalStates: ['已过期', '已使用'],
      since: { column: 'updated_ms', kind: 'epoch_ms' },
      after: '90d',
      budget: '2h',
      table: '{table}_archive',
      index: 'idx_status_updated',
    });
    const archive = entityOf(parseEntityFile(file, 'seed.json'), 'user_coupon').archive!;
    expect(archive.finalStates).toEqual(['已过期', '已使用']);
    expect({ afterMs: archive.afterMs, budgetMs: archive.budgetMs }).toEqual({ afterMs: 90 * DAY, budgetMs: 7_200_000 });
    expect(archive.tables.map((t) => [t.hot.key, t.archive.key])).toEqual([
      ['main.user_coupon_0', 'main.user_coupon_0_archive'],
      ['main.user_coupon_1', 'main.user_coupon_1_archive'],
      ['two.user_coupon_2', 'two.user_coupon_2_archive'],
      ['two.user_coupon_3', 'two.user_coupon_3_archive'],
    ]);
  });

  test('integer final states of an integer status', () => {
    const file = spread({ column: 'state', type: 'integer', values: [1, 8, 9] }, [1], 9, {
      finalStates: [9, 8],
      since: { column: 'closed_s', kind: 'epoch_s' },
      table: 'old_{table}',
      index: 'idx_state_closed',
    });
    expect(entityOf(parseEntityFile(file, 'seed.json'), 'user_coupon').archive!.finalStates).toEqual([9, 8]);
  });
});

describe('an archive that could take a row timebucket may still move is refused, every problem named', () => {
  test("a from-state of the entity's own transition, and one an effect of another entity moves (LOCKED: an order's cancellation releases it)", () => {
    expect(problemsOf(withCouponArchive({ ...couponArchive, finalStates: ['EXPIRED', 'ACTIVE', 'LOCKED'] }))).toEqual([
      'entities.0.archive.finalStates.1: "ACTIVE" is a from-state of a transition or effect: its rows may still move, never archived',
      'entities.0.archive.finalStates.2: "LOCKED" is a from-state of a transition or effect: its rows may still move, never archived',
    ]);
  });

  test('final states of the wrong type, undeclared, or twice; the since column the id or the status', () => {
    const typed = spread({ column: 'state', type: 'integer', values: [1, 9] }, [1], 9, {
      finalStates: ['9', 7, 9, 9],
      since: { column: 'id', kind: 'epoch_s' },
      table: '{table}_old',
      index: 'idx_state_closed',
    });
    expect(problemsOf(typed)).toEqual([
      'entities.0.archive.finalStates.0: status of \'user_coupon\' is an integer; "9" is not',
      "entities.0.archive.finalStates.1: 7 is not one of the status values of 'user_coupon'",
      'entities.0.archive.finalStates: a final state is listed twice',
      'entities.0.archive.since.column: the since column cannot be the id column',
    ]);
  });

  test('ages and budgets that are not positive fixed durations', () => {
    const problems = problemsOf(withCouponArchive({ ...couponArchive, after: '0s', budget: 'P1M' }));
    expect(problems).toEqual([
      'entities.0.archive.after: "0s": more than 0',
      'entities.0.archive.budget: "P1M": months, weeks and years are not fixed lengths; write days (P21D, 21d)',
    ]);
  });

  test('archive tables: one name for many hot tables, a mapped table, a name too long, a field the file does not know', () => {
    const one = spread({ column: 'status', type: 'string' }, ['A'], 'B', {
      finalStates: ['B'],
      since: { column: 'u', kind: 'datetime' },
      table: 'archive',
      index: 'i',
    });
    expect(problemsOf(one)).toEqual([
      "entities.0.archive.table: 'user_coupon' has 4 tables: write the archive's name with {table} (e.g. {table}_archive), one per hot table",
    ]);
    expect(problemsOf(withCouponArchive({ ...couponArchive, table: 'orders' }))).toEqual([
      "entities.0.archive.table: 'main.orders' is a mapped table: the archive is a table of its own",
    ]);
    expect(problemsOf(withCouponArchive({ ...couponArchive, table: `{table}_${'x'.repeat(60)}` }))).toEqual([
      `entities.0.archive.table: 'coupons_${'x'.repeat(60)}' (for coupons) is not a plain SQL identifier (letters, digits and _; at most 64)`,
    ]);
    expect(problemsOf(withCouponArchive({ ...couponArchive, movedAt: 'archived_at' }))).toEqual([
      expect.stringMatching(/^entities\.0\.archive: Unrecognized key/),
    ]);
  });

  test("an entity named 'archiver' (the archiver's switch)", () => {
    expect(problemsOf(withCouponArchive(couponArchive, (f) => (f.entities[0]!['name'] = 'archiver')))).toContain(
      "entities.0.name: 'archiver' is the archiver's switch; name the entity otherwise",
    );
  });
});
