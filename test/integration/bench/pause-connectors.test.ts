/**
 * `make bench` pauses the stack's connectors while it measures (bench/lib/connect-rest.ts) and
 * resumes them at its end: every connector the worker runs is PAUSED, task included, then
 * RUNNING again, against the stack's real Connect worker.
 *
 * @lane exclusive
 */
import { connectUrl, pauseAllConnectors } from '../../../bench/lib/connect-rest';

type Statuses = Record<string, { status: { connector: { state: string }; tasks: Array<{ state: string }> } }>;

async function states(): Promise<Record<string, string[]>> {
  const statuses = (await (await fetch(`${connectUrl}/connectors?expand=status`)).json()) as Statuses;
  return Object.fromEntries(Object.entries(statuses).map(([name, s]) => [name, [s.status.connector.state, ...s.status.tasks.map((t) => t.state)]]));
}

test("the stack's connectors are paused, tasks included, and run again once resumed", async () => {
  const before = await states();
  expect(Object.keys(before).length).toBeGreaterThan(0);
  const resume = await pauseAllConnectors();
  try {
    for (const [name, s] of Object.entries(await states())) expect({ name, states: s }).toEqual({ name, states: s.map(() => 'PAUSED') });
  } finally {
    await resume();
  }
  for (const [name, s] of Object.entries(await states())) expect({ name, states: s }).toEqual({ name, states: s.map(() => 'RUNNING') });
}, 150_000);
