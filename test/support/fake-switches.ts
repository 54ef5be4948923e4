/** Control switches the test sets directly (pause, resume, throttle), for the expirer's and scanner's gates. */
import type { SwitchReader } from '../../src/control/switches';
import type { SwitchName } from '../../src/control/switch-state';

export type FakeSwitches = ReturnType<typeof fakeSwitches>;

export function fakeSwitches() {
  const paused = new Set<SwitchName>();
  const rates = new Map<SwitchName, number>();
  const listeners = new Set<() => void>();
  const reader: SwitchReader = {
    paused: (what) => paused.has(what),
    perSecond: (what) => rates.get(what),
    onChange: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  const changed = () => listeners.forEach((l) => l());
  return {
    reader,
    pause: (what: SwitchName) => (paused.add(what), changed()),
    resume: (what: SwitchName) => (paused.delete(what), changed()),
    throttle: (what: SwitchName, perSecond: number | undefined) => (perSecond === undefined ? rates.delete(what) : rates.set(what, perSecond), changed()),
    listeners: () => listeners.size,
  };
}
