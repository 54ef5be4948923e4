/**
 * The consumer group of each role: every process of a role shares it. One place, because the
 * operator commands (topics apply, offsets reset) act on the groups the running roles join.
 */
import type { Role } from '../main';

export function groupIdOf(groupPrefix: string, role: Role): string {
  return `${groupPrefix}.${role}`;
}
