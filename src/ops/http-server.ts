/**
 * The operations endpoint: /metrics (Prometheus text), /healthz (liveness: every consumer is
 * alive and its consume loop makes progress; the reasons in the body when not) and /readyz
 * (every consumer joined its group, the process is healthy and not shutting down).
 *
 * /readyz answers in JSON: `ready` plus what `readyDetails` adds (the control switches: what is
 * paused or throttled). A paused process is ready: it is healthy, holds its partitions on
 * purpose, and must be neither restarted nor taken out of its group; the body says why it is
 * not transitioning.
 */
import { createServer, Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from './logger';

export type OpsServer = Readonly<{ port: number; close: () => Promise<void> }>;

export type HealthCheck = () => Readonly<{ ok: boolean; problems: readonly string[] }>;

export async function startOpsServer(opts: {
  port: number;
  host?: string;
  registry: Registry;
  isReady: () => boolean;
  health?: HealthCheck;
  /** Added to /readyz's JSON body (never decides readiness). */
  readyDetails?: () => Record<string, unknown>;
  logger: Logger;
}): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405).end();
    } else if (path === '/metrics') {
      opts.registry
        .metrics()
        .then((text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text))
        .catch((err: unknown) => {
          opts.logger.warn({ err }, 'metrics collection failed');
          res.writeHead(500).end();
        });
    } else if (path === '/healthz') {
      const health = opts.health?.() ?? { ok: true, problems: [] };
      res.writeHead(health.ok ? 200 : 503, { 'content-type': 'text/plain' }).end(health.ok ? 'ok\n' : `unhealthy\n${health.problems.join('\n')}\n`);
    } else if (path === '/readyz') {
      const ready = opts.isReady();
      const body = { ready, ...opts.readyDetails?.() };
      res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : opts.port;
  opts.logger.info({ port }, 'ops endpoint listening (/metrics, /healthz, /readyz)');
  let closed: Promise<void> | undefined;
  return {
    port,
    close: () => (closed ??= new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}
