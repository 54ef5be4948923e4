/**
 * What a process has cost so far, from /proc (Linux): CPU seconds (user + system) and resident
 * memory. Reading /proc costs the measured process nothing, unlike asking it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (almost always 100). */
const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) the process has used since it started; null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    // The command name (field 2) may hold spaces: split after its closing parenthesis.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return null;
  }
}

/** VmHWM (peak resident set over the process's life) and VmRSS (now), in MiB; null once it is gone. */
export function memoryMb(pid: number): { peakRssMb: number; rssMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakRssMb: round(kb('VmHWM') / 1024), rssMb: round(kb('VmRSS') / 1024) };
  } catch {
    return null;
  }
}

const round = (x: number) => Math.round(x * 10) / 10;

/** The whole machine's CPU time so far (/proc/stat), in seconds: busy and idle (idle + iowait). */
export function machineCpuSeconds(): { busy: number; idle: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
    return { busy: (user + nice + system + irq + softirq + steal) / ticksPerSecond, idle: (idle + iowait) / ticksPerSecond };
  } catch {
    return null;
  }
}
