// A real Redis for the queue's process tests: Debian's redis-server on a free loopback port, its data
// in a temp directory, append-only persistence on (the guarantees assume it). Same API as the core's
// test/queue/redis.ts (`startRedis(): Promise<{ url, port, stop(), restart() }>`), written here because
// that file was not on main yet; once it is, the process tests can import it instead and this file goes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Shuts it down (SHUTDOWN: the append-only file is flushed) and deletes its data. */
  stop(): Promise<void>;
  /** Shuts it down gracefully, waits `downMs`, and starts it again on the same port and data. */
  restart(downMs?: number): Promise<void>;
}

const REDIS = process.env.REDIS_SERVER ?? 'redis-server';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Sends one inline command and resolves with the first reply line (or '' when the server closed first, as SHUTDOWN does). */
function command(port: number, cmd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let data = '';
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`${cmd}\r\n`));
    sock.on('data', (c: string) => {
      data += c;
      if (data.includes('\r\n')) sock.end();
    });
    sock.on('close', () => resolve(data.split('\r\n')[0] ?? ''));
    sock.on('error', reject);
  });
}

async function waitReady(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const end = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}):\n${log()}`);
    // PING answers -LOADING while the append-only file is replayed: wait for PONG.
    if ((await command(port, 'PING').catch(() => '')) === '+PONG') return;
    if (Date.now() > end) throw new Error(`redis-server on port ${port} did not answer PING in 10 s:\n${log()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Starts redis-server on a free port, append-only with Redis's default `appendfsync everysec` (a
 * graceful SHUTDOWN flushes the file, so a restart loses nothing), no RDB snapshots, no eviction
 * (BullMQ needs its keys kept).
 *
 * @example
 * ```ts
 * const redis = await startRedis();
 * const queue = new JobQueue({ connection: redis.url });
 * await redis.restart(); // jobs survive
 * await redis.stop();
 * ```
 */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'platformui-redis-'));
  let child: ChildProcess;
  let out = '';
  const launch = async () => {
    out = '';
    child = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes',
      '--save', '', '--maxmemory-policy', 'noeviction', '--protected-mode', 'yes', '--daemonize', 'no', '--loglevel', 'warning'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
    await waitReady(port, child, () => out);
  };
  const shutdown = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    await command(port, 'SHUTDOWN').catch(() => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
    async restart(downMs = 0) {
      await shutdown();
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      await launch();
    },
  };
}
