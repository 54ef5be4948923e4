/**
 * A TCP proxy in the test's own process, in front of one of the stack's database servers, that
 * can be frozen: a database that neither answers nor refuses (a hung host, a network partition),
 * as SIGSTOP makes a server, but for this test's connections alone, so a file on the isolated
 * lane can take "its" database away without touching anyone else's.
 *
 * Frozen, nothing is forwarded either way (what is sent is dropped) and new connections are
 * accepted but never answered: statements and handshakes hang until their own deadlines.
 * Thawed, every connection that lived through the freeze is ended (its bytes were lost, so it is
 * out of step with its server; a pool reconnects) and new connections go through.
 *
 * Held, the server's answers wait in the proxy and are all delivered on release: a database
 * that answers late but loses nothing (a stalled host), for signals that measure how late.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export type FreezableProxy = Readonly<{
  port: number;
  freeze: () => void;
  thaw: () => void;
  hold: () => void;
  release: () => void;
  close: () => Promise<void>;
}>;

export async function startFreezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  let frozen = false;
  let held = false;
  /** Answers held back, in order, per client socket. */
  const waiting: Array<readonly [Socket, Buffer]> = [];
  const open = new Set<Socket>();
  const track = (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => s.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (frozen) {
      // Accepted, never answered: the client's handshake waits until its own timeout.
      client.pause();
      return;
    }
    const upstream = connect(target.port, target.host);
    track(upstream);
    const pipe = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (frozen) return;
        if (held && to === client) waiting.push([to, chunk]);
        else to.write(chunk);
      });
    pipe(client, upstream);
    pipe(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port');
  return {
    port: address.port,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      // A stream whose bytes were dropped is out of step with its server: end it.
      for (const s of open) s.destroy();
    },
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const [to, chunk] of waiting.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
