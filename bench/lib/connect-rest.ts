/**
 * The stack's Kafka Connect REST API, as a deployment's tooling would use it: create or update a
 * connector and wait until it and its task run, delete one, pause and resume the ones already
 * there. Shared by the bench (a captured database of each run's own) and the integration tests.
 */
import { log } from './log';
import { waitFor } from './wait-for';

export const connectUrl = `http://127.0.0.1:${process.env['TB_CONNECT_PORT'] ?? '18083'}`;

type ConnectorStatus = Readonly<{ connector: { state: string }; tasks: ReadonlyArray<{ state: string; trace?: string }> }>;

async function status(name: string): Promise<ConnectorStatus | undefined> {
  const res = await fetch(`${connectUrl}/connectors/${encodeURIComponent(name)}/status`, { signal: AbortSignal.timeout(5_000) });
  return res.ok ? ((await res.json()) as ConnectorStatus) : undefined;
}

/**
 * PUT (create or update), then a bounded wait until the connector and its task are RUNNING. A
 * worker that has just (re)started can close the connection or answer 409 (rebalancing) or 5xx
 * while it joins: the PUT is tried again until the deadline; a 4xx other than 409 is an error.
 */
export async function putConnector(name: string, body: Readonly<Record<string, string>>): Promise<void> {
  const refused = await waitFor(
    `connector ${name} accepted by Connect`,
    async () => {
      const put = await fetch(`${connectUrl}/connectors/${encodeURIComponent(name)}/config`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      if (put.ok) return null;
      const text = await put.text();
      // A refusal is final (a bad config): reported now, not retried to the deadline.
      return put.status !== 409 && put.status < 500 ? `HTTP ${put.status} ${text}` : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
  if (refused !== null) throw new Error(`registering connector ${name}: ${refused}`);
  await waitFor(`connector ${name} and its task RUNNING`, () => runningOrFailed(name), { timeoutMs: 60_000, intervalMs: 500 });
}

async function runningOrFailed(name: string): Promise<true | undefined> {
  const s = await status(name);
  if (s === undefined) return undefined;
  const failed = [s.connector, ...s.tasks].find((x) => x.state === 'FAILED');
  if (failed !== undefined) throw new Error(`connector ${name} FAILED: ${(failed as { trace?: string }).trace?.slice(0, 800) ?? ''}`);
  return s.connector.state === 'RUNNING' && s.tasks.length > 0 && s.tasks.every((t) => t.state === 'RUNNING') ? true : undefined;
}

export async function deleteConnector(name: string): Promise<void> {
  await fetch(`${connectUrl}/connectors/${encodeURIComponent(name)}`, { method: 'DELETE', signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
}

/**
 * Pauses every connector the worker runs now and returns what resumes them. The bench's runs
 * each capture a database of their own: the stack's connectors would only read the runs' binlog
 * events to drop them, CPU on the measured machine that no contender asked for.
 */
export async function pauseAllConnectors(): Promise<() => Promise<void>> {
  const res = await fetch(`${connectUrl}/connectors`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET /connectors: HTTP ${res.status}`);
  const names = (await res.json()) as string[];
  for (const name of names) await changeState(name, 'pause', 'PAUSED');
  return async () => {
    for (const name of names) await changeState(name, 'resume', 'RUNNING').catch((err: unknown) => log(`could not resume ${name}: ${String(err)}`));
  };
}

async function changeState(name: string, action: 'pause' | 'resume', state: string): Promise<void> {
  const res = await fetch(`${connectUrl}/connectors/${encodeURIComponent(name)}/${action}`, { method: 'PUT', signal: AbortSignal.timeout(10_000) });
  if (!res.ok && res.status !== 202) throw new Error(`PUT /connectors/${name}/${action}: HTTP ${res.status}`);
  await waitFor(
    `connector ${name} ${state}`,
    async () => {
      const s = await status(name);
      return s !== undefined && s.connector.state === state && s.tasks.every((t) => t.state === state) ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}
