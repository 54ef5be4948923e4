/**
 * What the gauges read at scrape time, registered by the stages that report it (the track*
 * methods of Metrics), and the series that exist from the start at 0. A scrape never waits on
 * I/O: a source returns what its stage already holds.
 */

/** What a hold stage reports at scrape time. */
export type HoldStatsSource = () => Readonly<{ heldPartitions: number; inMemory: number; largestPartitionInMemory: number; dueLag: number }>;
/** The control switches as this process applies them, read at scrape time. */
export type ControlSource = () => ReadonlyArray<Readonly<{ what: string; paused: boolean; perSecond: number | null }>>;

export type MetricSources = {
  /** By stage (expirer, cascader). */
  readonly hold: Map<string, HoldStatsSource>;
  control?: ControlSource;
  cdcLag?: () => number;
  captureLag?: () => Readonly<Record<string, number>>;
  missingSchemaIds?: () => number;
};

/**
 * Series that exist from the start, at 0, rather than appearing with their first event: a rate()
 * or an alert over them then has data (and a dashboard a line) from the first scrape.
 * `entities`: the catalogue's entity names; `transitions`: its transitions (reminder series).
 */
export type SeriesAtZero = Readonly<{
  entities: readonly string[];
  transitions: ReadonlyArray<Readonly<{ entity: string; name: string }>>;
}>;
