// A real redis-server for the queue's tests: on a free port, its data in a temp dir (append-only file on, snapshots
// off, so that restart() keeps what was written), stopped by the test. Shared with the process-level suites.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its directory. */
  stop(): Promise<void>;
  /** Stops it (SIGKILL: a crash) and starts it again on the same port and data directory. */
  restart(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** One PING over a raw socket: resolves true on +PONG. */
const ping = (port: number) =>
  new Promise<boolean>((resolve) => {
    const sock = connect(port, '127.0.0.1');
    const done = (ok: boolean) => (sock.destroy(), resolve(ok));
    sock.once('error', () => done(false));
    sock.once('data', (d) => done(d.toString().startsWith('+PONG')));
    sock.write('PING\r\n');
    setTimeout(() => done(false), 1000).unref();
  });

async function waitForPing(port: number, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    if (await ping(port)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`redis-server on ${port} did not answer PING`);
}

const stopChild = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
    if (signal !== 'SIGKILL') setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });

/**
 * Starts redis-server on a free loopback port and resolves once it answers PING.
 *
 * @example
 * ```ts
 * const redis = await startRedis();
 * const queue = new JobQueue({ connection: redis.url });
 * await redis.stop();
 * ```
 */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pui-redis-'));
  const launch = async () => {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir], { stdio: 'ignore' });
    await waitForPing(port, child);
    return child;
  };
  let child = await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await stopChild(child, 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await stopChild(child, 'SIGKILL');
      child = await launch();
    },
  };
}
