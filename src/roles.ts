/**
 * The roles a process runs and what each one is: its consumer group, the rings it reads, the
 * codes it dead-letters with. One module, so that main.ts (which wires them), the CLI (which
 * parses --roles), and the operator commands (topics apply, offsets reset, replay: they act on
 * the groups the live roles join) agree. Pure.
 */
import type { ErrorCode } from './core/errors';
import type { Topology } from './core/topology';

export const Roles = ['repartitioner', 'expirer', 'cascader', 'outbox-keeper', 'scanner'] as const;
export type Role = (typeof Roles)[number];

/** The roles that hold ring partitions back until their buckets are due. */
export type HoldRole = Extract<Role, 'expirer' | 'cascader'>;

/** The consumer group of a role: every process of the role shares it. */
export function groupIdOf(groupPrefix: string, role: Role): string {
  return `${groupPrefix}.${role}`;
}

/** Who reads a tier's rings: the expirer the finest tier (it expires), the cascader every coarser one (it re-routes). */
export function holdRoleOfTier(tierIndex: number): HoldRole {
  return tierIndex === 0 ? 'expirer' : 'cascader';
}

/** The tiers (by index) whose rings `role` reads; the expirer reads the due lane besides. */
export function tiersReadBy(role: HoldRole, topology: Pick<Topology, 'tiers'>): number[] {
  return topology.tiers.map((_, i) => i).filter((i) => holdRoleOfTier(i) === role);
}

/** A role, or the outbox writer of the roles that run transitions: the `stage` of a dead letter. */
export type DeadLetterStage = Role | 'outbox';

/**
 * What each stage dead-letters: bad CDC records, bucket records that hold no readable entry
 * (CDC_INVALID: the entry decoder's), entries parked after failing alone, events that can never
 * be published. The first code of each is what a failure that is not one of ours is filed as.
 */
export const DeadLetterCodes: Readonly<Partial<Record<DeadLetterStage, readonly [ErrorCode, ...ErrorCode[]]>>> = {
  repartitioner: ['CDC_UNDECODABLE', 'CDC_INVALID'],
  expirer: ['BUCKET_INVALID', 'CDC_INVALID', 'EXPIRY_PARKED'],
  cascader: ['BUCKET_INVALID', 'CDC_INVALID'],
  outbox: ['EVENT_REJECTED', 'EVENT_TOO_LARGE'],
};
