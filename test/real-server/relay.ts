// A TCP relay of the tests' own between a client and a real server, which cuts the
// WebSockets it carries on demand (test/real-server/cut-socket.test.ts, bench/cut-socket.ts).
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** How new WebSockets fare after a cut: closed before any answer, or let through to their 101 and cut at once. */
export type Mode = 'refused' | 'storm';

/** A relay between a client and a server, which cuts WebSockets on demand. */
export interface Relay {
  /** The relay's base URL, for the client. */
  url: string;
  /** Ends every WebSocket it carries, and treats new ones as `mode` says for `ms`. */
  cut(mode: Mode, ms: number): void;
  /** Resolves once WebSockets go through again. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP relay to `upstream`. `cut(mode, ms)` ends every WebSocket it carries; for `ms` after,
 * a new WebSocket is refused (its connection closed before any answer) or, in a storm, let
 * through to its 101 answer and cut right after. Plain HTTP always goes through. An upgrade
 * may come on a connection that carried plain requests before (a runtime's connection pool),
 * so every request is looked at, not only a connection's first.
 */
export async function startRelay(upstream: URL): Promise<Relay> {
  const open = new Set<Socket>();
  const webSockets = new Set<Socket>();
  let down: { mode: Mode; until: number } | undefined;
  const isDown = (mode: Mode) => down?.mode === mode && Date.now() < down.until;
  const relay: Server = createServer((client) => {
    const server = createConnection({ host: upstream.hostname, port: Number(upstream.port) });
    // As a proxy does: no Nagle delay on small writes (it would add ~40 ms against the peer's delayed ACKs).
    client.setNoDelay(true);
    server.setNoDelay(true);
    const end = () => [client, server].forEach((s) => s.destroy());
    open.add(client);
    client.on('error', end).on('close', () => (open.delete(client), webSockets.delete(client), end()));
    server.on('error', end).on('close', end);
    let storm = false;
    client.on('data', (chunk: Buffer) => {
      // HTTP/1.1 without pipelining: each request starts a chunk.
      if (chunk.subarray(0, 7).toString('latin1') === 'GET /ws') {
        if (isDown('refused')) return end();
        webSockets.add(client);
        storm = isDown('storm');
      }
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      client.write(chunk);
      if (storm) setImmediate(end);
    });
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  const { port } = relay.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    cut(mode, ms) {
      down = { mode, until: Date.now() + ms };
      for (const s of webSockets) s.destroy();
    },
    up: () => new Promise((r) => setTimeout(r, Math.max(0, (down?.until ?? 0) - Date.now()) + 50)),
    close: () => new Promise((r) => (relay.close(() => r()), open.forEach((s) => s.destroy()))),
  };
}
