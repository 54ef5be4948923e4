/** What the harness needs of a contender: start it, hand it the rows, follow it, stop it. */
import type { PacingReport } from './contenders/pacing-watch';
import type { Config } from '../../src/config';
import type { Db } from '../../src/db/knex';
import type { Child } from '../lib/children';
import type { BenchParams, ContenderName, WorkloadName } from './params';
import type { WrittenRows } from './workload';

export type ContenderContext = Readonly<{
  params: BenchParams;
  /** The configuration from the environment (TB_DB_NAME: the stack's database, not the run's). */
  config: Config;
  /** Started before the workload is planned: its T must leave room for the start-up. */
  workload: WorkloadName;
  /** The database the rows are written to, and its name (for the contender's processes). */
  db: Db;
  dbName: string;
  /** Where this run's processes write their logs (one file each). */
  logPrefix: string;
}>;

export type EventsSeen = Readonly<{
  /** Distinct events of the run's rows. */
  count: number;
  lastTimestampMs: number | null;
  /** Distinct events of other rows: something else wrote to the captured database meanwhile. */
  foreign: number;
  /** Every record read, whatever its key: a follower that read nothing apart from one that could not read its keys. */
  records: number;
  /** The follower's consumer crashed and kafkajs will not restart it (its error): it reads no more. */
  crashed?: string;
}>;

export type RunningContender = Readonly<{
  /** The processes of the contender itself, to measure. */
  children: readonly Child[];
  /** Rows as they are written (only raw, which is told its ids, uses them). */
  onRows: (rows: WrittenRows) => void;
  /**
   * Transitions seen so far, from something that costs the database nothing: the workers' own
   * counts, the scanner's log of its catches, the stream's events on its event topics.
   */
  progress: () => number;
  /** The stream only: the events published, as read back from the event topics. */
  events?: () => EventsSeen;
  /** The stream only (its progress counts events): transitions so far, from its expirers' /metrics. */
  transitions?: () => Promise<number>;
  /** The stream only: what its pacers did since it started (contenders/pacing-watch.ts). */
  pacing?: () => PacingReport;
  stop: () => Promise<void>;
}>;

export type Contender = Readonly<{
  name: ContenderName;
  /** The stream reads its rows through Debezium (connectors of its own): its T must leave room for the capture. */
  needsCdc: boolean;
  start: (ctx: ContenderContext) => Promise<RunningContender>;
}>;
