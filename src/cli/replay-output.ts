/**
 * How `replay` and `offsets reset` print their results: a plain `name: value` line per figure
 * (easy to read and to grep), or one JSON object with `--json`. Every time is UTC ISO-8601.
 */
import type { PartitionScan } from '../replay/bucket-scan';
import type { OffsetsResetResult } from '../replay/bucket-offsets-reset';
import type { BucketWindow } from '../replay/bucket-window';
import { formatUtc } from '../core/utc-time';
import type { ReplaySummary } from '../replay/replay-bucket';

export function bucketJson(window: BucketWindow) {
  return { tier: window.tier.name, start: formatUtc(window.startMs), end: formatUtc(window.endMs), topic: window.topic };
}

export function bucketLine(window: BucketWindow): string {
  return `bucket: [${formatUtc(window.startMs)}, ${formatUtc(window.endMs)}) tier ${window.tier.name}`;
}

function partitionLine(p: PartitionScan): string {
  const first = p.firstOffset === undefined ? 'none' : p.firstOffset;
  return `partition ${p.partition}: offsets [${p.fromOffset}, ${p.endOffset}) read ${p.records} records, ${p.entries} of the bucket (first at ${first}), ${p.invalid} invalid; stopped: ${p.stop ?? 'unfinished'}`;
}

export function replayJson(s: ReplaySummary) {
  const { counts } = s;
  return {
    dryRun: s.dryRun,
    bucket: { ...bucketJson(s.window), phase: s.phase },
    entity: s.entity ?? null,
    shard: s.shard ?? null,
    partitions: s.partitions,
    entries: counts.entries,
    ...(s.dryRun ? { due: counts.due } : { transitioned: counts.transitioned }),
    alreadyDone: counts.alreadyDone,
    notDue: counts.notDue,
    stale: counts.stale,
    reminders: counts.reminders,
    invalid: counts.invalid,
  };
}

export function replayLines(s: ReplaySummary): string[] {
  const { counts } = s;
  return [
    ...(s.dryRun ? ['dry run: nothing was changed'] : []),
    `${bucketLine(s.window)} (${s.phase})`,
    `topic: ${s.window.topic}`,
    ...(s.entity === undefined ? [] : [`entity: ${s.entity}`]),
    ...(s.shard === undefined ? [] : [`shard: ${s.shard}`]),
    `partitions read: ${s.partitions.map((p) => p.partition).join(', ') || 'none'}`,
    ...s.partitions.map(partitionLine),
    `entries found: ${counts.entries}`,
    s.dryRun ? `due (would transition): ${counts.due}` : `transitioned: ${counts.transitioned}`,
    `already done: ${counts.alreadyDone}`,
    `not due: ${counts.notDue}`,
    `stale (moved on, extended or gone since): ${counts.stale}`,
    // Only where the entities file declares reminders: other replays print what they always did.
    ...(counts.reminders > 0 ? [`reminders ${s.dryRun ? 'found' : 'run again (each sent only if it never was)'}: ${counts.reminders}`] : []),
    `invalid records skipped: ${counts.invalid}`,
  ];
}

/**
 * The stock tool's equivalent of a reset, one command per partition (a Kafka distribution's
 * kafka-consumer-groups.sh; locally stack/bin/kafka-consumer-groups.sh).
 */
export function stockResetCommands(brokers: readonly string[], r: OffsetsResetResult): string[] {
  return r.partitions.flatMap((p) =>
    p.target === undefined
      ? []
      : [
          `kafka-consumer-groups.sh --bootstrap-server ${brokers.join(',')} --group ${r.group} --topic ${r.window.topic}:${p.partition} --reset-offsets --to-offset ${p.target} --execute`,
        ],
  );
}

export function offsetsResetJson(r: OffsetsResetResult, dryRun: boolean, brokers: readonly string[]) {
  return {
    dryRun,
    group: r.group,
    bucket: bucketJson(r.window),
    members: r.members,
    refused: r.refused,
    applied: r.applied,
    partitions: r.partitions.map((p) => ({ partition: p.partition, committed: p.committed, first: p.first ?? null, target: p.target ?? null })),
    unmoved: r.unmoved,
    stockCommands: stockResetCommands(brokers, r),
  };
}

export function offsetsResetLines(r: OffsetsResetResult, dryRun: boolean, brokers: readonly string[]): string[] {
  const moves = r.partitions.filter((p) => p.target !== undefined);
  const result = dryRun
    ? `dry run: nothing was changed; would move ${moves.length} partition(s)`
    : r.applied
      ? `offsets reset: ${moves.length} partition(s) moved`
      : r.unmoved.length > 0
        ? `offsets reset INCOMPLETE: ${moves.length - r.unmoved.length} of ${moves.length} partition(s) moved; ${r.unmoved.map((u) => `partition ${u.partition} reads back ${committedText(u.committed)}, not ${u.target}`).join('; ')}: run the command again`
        : 'nothing to reset: no partition has read past a record of the bucket';
  return [
    `group: ${r.group}`,
    bucketLine(r.window),
    `topic: ${r.window.topic}`,
    ...(dryRun && r.members.length > 0
      ? [`note: the group has ${r.members.length} member(s) (${r.members.join(', ')}): a real run refuses until it has none`]
      : []),
    ...r.partitions.map((p) => {
      if (p.first === undefined) return `partition ${p.partition}: no record of the bucket; left at ${committedText(p.committed)}`;
      if (p.target === undefined)
        return `partition ${p.partition}: ${committedText(p.committed)} is not past the bucket's first record ${p.first} (the bucket is still to be read); left`;
      return `partition ${p.partition}: ${p.committed} -> ${p.target} (the bucket's first record)`;
    }),
    result,
    ...(moves.length > 0 ? ['equivalent stock commands (with the group stopped):', ...stockResetCommands(brokers, r)] : []),
  ];
}

function committedText(offset: string): string {
  return offset === '-1' ? 'no committed offset' : offset;
}
