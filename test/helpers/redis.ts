// A real redis-server for the queue's tests (in-process and process-level suites, and the CLI's): on a free
// loopback port, its data in a temp dir, append-only file on and RDB snapshots off (so that restart() comes back
// on what was written), no eviction (BullMQ needs its keys kept). Each test starts its own and stops it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RestartOptions {
  /** Kill it with SIGKILL (a crash) instead of the graceful `SHUTDOWN`. Default false. */
  crash?: boolean;
  /** How long (ms) it stays down before it starts again. Default 0. */
  downMs?: number;
}

export interface TestRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Shuts it down (`SHUTDOWN`, SIGKILL if it has not gone in 5 s) and removes its directory. */
  stop(): Promise<void>;
  /**
   * Stops it and starts it again on the same port and data directory; resolves once it answers PING (after
   * replaying its append-only file). Every client connection drops either way.
   *
   * - Default, graceful (`SHUTDOWN`): what the guarantee is about ("Redis stopped gracefully and
   *   restarted, append-only persistence on"). Redis writes and fsyncs the append-only file before exiting:
   *   nothing it acknowledged is lost.
   * - `crash: true` (SIGKILL): no flush. Redis writes each command to the file (the OS's cache) before it replies,
   *   so what it acknowledged normally survives a process crash; but with Redis's default `appendfsync everysec`
   *   it may put that write off behind a slow fsync (up to 2 s) and reply anyway: those writes are lost. A partial
   *   last command is dropped on load (`aof-load-truncated yes`).
   *
   * @example
   * ```ts
   * await redis.restart({ downMs: 500 });  // graceful, down half a second
   * await redis.restart({ crash: true });  // SIGKILL
   * ```
   */
  restart(options?: RestartOptions): Promise<void>;
}

const REDIS = process.env.REDIS_SERVER ?? 'redis-server';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Sends one inline command over a raw socket; resolves with the first reply line ('' when the server closed first, as SHUTDOWN does, or did not answer in 1 s). */
const command = (port: number, cmd: string) =>
  new Promise<string>((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let data = '';
    const done = () => (sock.destroy(), resolve(data.split('\r\n')[0] ?? ''));
    sock.setEncoding('utf8');
    sock.once('connect', () => sock.write(`${cmd}\r\n`));
    sock.on('data', (c: string) => {
      data += c;
      if (data.includes('\r\n')) done();
    });
    sock.once('close', done);
    sock.once('error', done);
    setTimeout(done, 1000).unref();
  });

async function waitForPing(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}:\n${log()}`);
    // PING answers -LOADING while the append-only file is replayed: wait for PONG.
    if ((await command(port, 'PING')) === '+PONG') return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`redis-server on ${port} did not answer PING:\n${log()}`);
}

/** Stops the server: `SHUTDOWN` (SIGKILL after 5 s), or SIGKILL at once when `crash`. */
async function stopChild(child: ChildProcess, port: number, crash: boolean): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  if (crash) child.kill('SIGKILL');
  else await command(port, 'SHUTDOWN');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts redis-server on a free loopback port and resolves once it answers PING.
 *
 * @example
 * ```ts
 * const redis = await startRedis();
 * const queue = new JobQueue({ connection: redis.url });
 * await redis.restart(); // graceful: jobs survive
 * await redis.stop();
 * ```
 */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pui-redis-'));
  let out = '';
  const launch = async () => {
    out = '';
    const child = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '',
      '--maxmemory-policy', 'noeviction', '--daemonize', 'no', '--loglevel', 'warning'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
    try {
      await waitForPing(port, child, () => out);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
    return child;
  };
  let child = await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await stopChild(child, port, false);
      rmSync(dir, { recursive: true, force: true });
    },
    async restart({ crash = false, downMs = 0 }: RestartOptions = {}) {
      await stopChild(child, port, crash);
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      child = await launch();
    },
  };
}
