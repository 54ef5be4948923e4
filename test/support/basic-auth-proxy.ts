/**
 * The stack's schema registry behind HTTP basic auth, as managed registries serve it: requests
 * with the expected credentials are forwarded to the real registry, any other gets 401 and is
 * counted. (The stack's registry itself runs without authentication: Apicurio's basic auth
 * needs an OpenID Connect server behind it.) A test checks the counts, so a client that sent
 * no credentials, or wrong ones, cannot pass unnoticed.
 */
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type BasicAuthProxy = Readonly<{
  /** The registry's Confluent-compatible base URL, through the proxy (no credentials in it). */
  url: string;
  counts: () => { forwarded: number; refused: number };
  close: () => Promise<void>;
}>;

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

export async function startBasicAuthProxy(upstreamUrl: string, credentials: { username: string; password: string }): Promise<BasicAuthProxy> {
  const upstream = new URL(upstreamUrl);
  const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  let forwarded = 0;
  let refused = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.headers.authorization !== expected) {
        refused++;
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="registry"', 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error_code: 401, message: 'Unauthorized' }));
        return;
      }
      forwarded++;
      const body = await bodyOf(req);
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'accept']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
      const answer = await fetch(`${upstream.origin}${req.url ?? '/'}`, { method: req.method, headers, ...(body.length > 0 && { body }) });
      res.writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((err: unknown) => {
      res.writeHead(502);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/$/, '')}`,
    counts: () => ({ forwarded, refused }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
