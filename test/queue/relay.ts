// A TCP relay in front of a redis-server for the queue's fault tests: clients connect to the relay, which
// forwards bytes both ways, and cut(ms) drops every connection and refuses new ones for ms (a network blip).
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Relay {
  /** `redis://127.0.0.1:<relay port>` */
  readonly url: string;
  /** Drops every connection through it now and refuses new ones (reset) for `ms`; resolves once it accepts again. */
  cut(ms: number): Promise<void>;
  /** From now on, a new connection reaches Redis only `ms` after it was opened (a slow network; 0: at once again). */
  slowNew(ms: number): void;
  close(): Promise<void>;
}

/**
 * A relay to `127.0.0.1:<port>`.
 *
 * @example
 * ```ts
 * const relay = await startRelay(redis.port);
 * const worker = await startWorker(dir, { connection: relay.url, … });
 * await relay.cut(1500); // the worker's connections drop, and it can reconnect 1.5 s later
 * ```
 */
export async function startRelay(port: number): Promise<Relay> {
  const open = new Set<Socket>();
  let refusing = false;
  let slow = 0;
  const server: Server = createServer((client) => {
    if (refusing) return void client.resetAndDestroy();
    // What the client sends meanwhile waits in its socket (nothing reads it before the pipe).
    if (slow > 0) return void setTimeout(() => relay(client), slow);
    relay(client);
  });
  const relay = (client: Socket) => {
    const upstream = connect(port, '127.0.0.1');
    open.add(client).add(upstream);
    const drop = () => {
      for (const s of [client, upstream]) {
        open.delete(s);
        s.destroy();
      }
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayPort = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${relayPort}`,
    async cut(ms) {
      refusing = true;
      for (const s of [...open]) s.resetAndDestroy();
      open.clear();
      await new Promise((r) => setTimeout(r, ms));
      refusing = false;
    },
    slowNew(ms) {
      slow = ms;
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
