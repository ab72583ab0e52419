// Memory of large transfers: a 1 GiB upload from a file path, a 1 GiB upload
// from a Node Readable (fs.createReadStream), and a 1 GiB download to disk,
// through the built SDK against the emulator running in a child process (so
// the server's memory is not counted). Target: the client's peak RSS growth
// stays ≤ 64 MiB for each, i.e. bodies stream instead of being buffered.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
//
// How memory is measured, and why: each operation runs in a FRESH child
// process (this file with `--child`) that first warms up with a tiny transfer
// of the same kind (so lazily imported modules, undici's pools and JIT code are
// in the baseline, not in the growth), then records RSS, runs the 1 GiB
// operation and reports
//
//     growth = max(peak RSS sampled every 10 ms, resourceUsage().maxRSS after) − RSS before.
//
// maxRSS is the kernel's high-water mark: unlike sampling it cannot miss a
// spike, including one during synchronous work that blocks the event loop
// (when no 10 ms timer can fire). But it is a lifetime maximum, so it is only
// meaningful in a process where nothing earlier came close: hence one fresh,
// warmed-up child per operation, never several operations in one process (a
// previous transfer's heap, or pages malloc keeps, would hide or inflate the
// next one's). Taking the larger of the two figures makes the result an upper
// bound of the true growth (if the operation never raised the high-water mark,
// maxRSS is the warm-up's, a little above the baseline), which is the safe
// side for a "≤ target" check. The sampled peak is printed too.
//
// Uploads go through a relay in this (parent) process that limits the
// client → server direction to LINK_MB_S, as a real network does, far below
// the speed the client reads the (sparse) file. A client that ignores socket
// backpressure (Node's fetch reads a request body as fast as the source gives
// it) then holds whatever the link has not taken yet. Over bare loopback that
// shows only when the server is the slower side, which depends on the machine;
// behind the slow link it always shows (SDK 53686b0, before uploads moved to
// node:http: ~1050 MiB growth for both uploads). Downloads go straight to the
// emulator: a slow link only makes a download's consumer (the disk) relatively faster.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, createReadStream, ftruncateSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const self = fileURLToPath(import.meta.url);
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const SIZE = GiB;
const TARGET_MIB = 64;
/** A child stops an operation whose growth passes this, so a regression cannot exhaust the machine. */
const ABORT_ABOVE = 3 * GiB;
const OUTPUT_NAME = 'bench-transfer-1GiB.bin';
/** Upload link speed, MB/s (10^6 bytes): 1.6 Gbit/s, still far below what the client reads from disk. */
const LINK_MB_S = 200;

type Op = 'upload-path' | 'upload-readable' | 'download-file';

interface ChildSpec {
  op: Op;
  url: string;
  key: string;
  /** Source file (uploads) or destination file (download). */
  file: string;
  /** Small file for the warm-up. */
  warmFile: string;
}

interface ChildResult {
  ok: boolean;
  error?: string;
  bytes: number;
  ms: number;
  baseline: number;
  sampledPeak: number;
  maxRssBefore: number;
  maxRssAfter: number;
  growth: number;
  /** Upload: the name the server gave (sha256 + extension). */
  name?: string;
}

// ---------------------------------------------------------------------------
// Child: one operation, measured.

async function child(spec: ChildSpec): Promise<ChildResult> {
  const { CloudClient } = (await import(`${root}dist/index.js`)) as typeof import('../src/index.ts');
  const cloud = new CloudClient({ baseUrl: spec.url, apiKey: spec.key, timeout: false, retry: false });
  const controller = new AbortController();
  const signal = controller.signal;

  const transfer = async (file: string, warm: boolean): Promise<{ bytes: number; name?: string }> => {
    if (spec.op === 'upload-path') {
      const res = await cloud.uploadImage(file, { signal });
      return { bytes: statSync(file).size, name: res.name };
    }
    if (spec.op === 'upload-readable') {
      const res = await cloud.uploadImage(createReadStream(file), { filename: 'upload.bin', signal });
      return { bytes: statSync(file).size, name: res.name };
    }
    const ref = warm ? { filename: 'warm.bin', subfolder: '', type: 'output' } : { filename: OUTPUT_NAME, subfolder: '', type: 'output' };
    return { bytes: await cloud.downloadToFile(ref, file, { signal }) };
  };

  // Warm-up with the same code path on a small file.
  await transfer(spec.op === 'download-file' ? `${spec.file}.warm` : spec.warmFile, true);
  rmSync(`${spec.file}.warm`, { force: true });
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((r) => setTimeout(r, 100));

  const baseline = process.memoryUsage.rss();
  const maxRssBefore = process.resourceUsage().maxRSS * 1024;
  let sampledPeak = baseline;
  const timer = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss > sampledPeak) sampledPeak = rss;
    if (rss - baseline > ABORT_ABOVE) controller.abort(new Error(`RSS grew past ${ABORT_ABOVE / GiB} GiB: stopped`));
  }, 10);
  const t0 = performance.now();
  let out: { bytes: number; name?: string } | undefined;
  let error: string | undefined;
  try {
    out = await transfer(spec.file, false);
  } catch (err) {
    error = signal.aborted ? String((signal.reason as Error).message) : err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
  const ms = performance.now() - t0;
  clearInterval(timer);
  const last = process.memoryUsage.rss();
  if (last > sampledPeak) sampledPeak = last;
  const maxRssAfter = process.resourceUsage().maxRSS * 1024;
  return {
    ok: error === undefined,
    ...(error !== undefined ? { error } : {}),
    bytes: out?.bytes ?? 0,
    ms,
    baseline,
    sampledPeak,
    maxRssBefore,
    maxRssAfter,
    growth: Math.max(sampledPeak, maxRssAfter) - baseline,
    ...(out?.name !== undefined ? { name: out.name } : {}),
  };
}

async function runChild(spec: ChildSpec): Promise<ChildResult> {
  const proc = spawn(process.execPath, ['--experimental-strip-types', '--no-warnings', '--expose-gc', self, '--child', JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (c: string) => (out += c));
  const kill = setTimeout(() => proc.kill('SIGKILL'), 10 * 60_000);
  const [code] = (await once(proc, 'exit')) as [number | null];
  clearTimeout(kill);
  const line = out.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as ChildResult;
  } catch {
    throw new Error(`child for ${spec.op} exited with ${code} without a result: ${out.slice(-500)}`);
  }
}

// ---------------------------------------------------------------------------
// Parent.

async function startEmulatorProcess(): Promise<{ url: string; key: string; stop: () => void }> {
  const args = [`${root}dist/emulator-cli.js`, '--port', '0', '--max-upload-bytes', 'Infinity', '--synthetic-output', `${OUTPUT_NAME}:${SIZE}`, '--synthetic-output', 'warm.bin:65536'];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.setEncoding('utf8');
  while (!/Cloud API key[^:]*: *\S+/.test(out)) {
    const [chunk] = (await Promise.race([once(proc.stdout, 'data'), once(proc, 'exit').then(() => [''])])) as [string];
    if (!chunk) throw new Error(`emulator exited: ${out}`);
    out += chunk;
  }
  const url = /http:\/\/[^\s/]+/.exec(out)![0];
  const key = /Cloud API key[^:]*: *([^\s,]+)/.exec(out)![1]!;
  return { url, key, stop: () => proc.kill() };
}

/** Paces the bytes through it to `bytesPerSecond`, with backpressure (it calls back only once a chunk may pass). */
class Throttle extends Transform {
  readonly #rate: number;
  readonly #start = performance.now();
  #sent = 0;
  constructor(bytesPerSecond: number) {
    super({ highWaterMark: 64 * 1024 });
    this.#rate = bytesPerSecond;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.#sent += chunk.length;
    const due = this.#start + (this.#sent / this.#rate) * 1000;
    const wait = due - performance.now();
    if (wait > 1) setTimeout(() => cb(null, chunk), wait);
    else cb(null, chunk);
  }
}

/** A TCP relay to `port` whose client → server direction runs at `bytesPerSecond`. */
async function startSlowLink(port: number, bytesPerSecond: number): Promise<{ url: string; close: () => void }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((down) => {
    const up = connect(port, '127.0.0.1');
    sockets.add(down).add(up);
    const done = () => {
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    down.on('error', done).on('close', done);
    up.on('error', done).on('close', done);
    down.pipe(new Throttle(bytesPerSecond)).pipe(up);
    up.pipe(down);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port: relayPort } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${relayPort}`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** sha256 of `size` zero bytes (the sparse file's content), hex. */
function zeroSha(size: number): string {
  const h = createHash('sha256');
  const block = Buffer.alloc(MiB);
  for (let left = size; left > 0; left -= block.length) h.update(left >= block.length ? block : block.subarray(0, left));
  return h.digest('hex');
}

/** Checks a few 64 KiB blocks of a downloaded synthetic output against the emulator's pattern. */
function patternOk(path: string, size: number): boolean {
  const B = 64 * 1024;
  const want = Buffer.from(Array.from({ length: B }, (_, i) => (i * 31 + 7) & 0xff));
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(B);
    for (const off of [0, Math.floor(size / B / 2) * B, size - B]) {
      const n = readSync(fd, buf, 0, B, off);
      if (n !== B || !buf.equals(want)) return false;
    }
    return true;
  } finally {
    closeSync(fd);
  }
}

const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'peak client RSS growth of 1 GiB upload / download';
  const dir = mkdtempSync(join(tmpdir(), 'platformui-bench-transfer-'));
  const source = join(dir, 'source-1GiB.bin');
  const warmFile = join(dir, 'warm.bin');
  const dest = join(dir, 'downloaded-1GiB.bin');
  let emu: Awaited<ReturnType<typeof startEmulatorProcess>> | undefined;
  let link: Awaited<ReturnType<typeof startSlowLink>> | undefined;
  try {
    // Sparse: no disk blocks written, reads return zeros.
    const fd = openSync(source, 'w');
    ftruncateSync(fd, SIZE);
    closeSync(fd);
    writeFileSync(warmFile, Buffer.alloc(64 * 1024, 1));
    const expectedName = `${zeroSha(SIZE)}.bin`;
    emu = await startEmulatorProcess();
    link = await startSlowLink(Number(new URL(emu.url).port), LINK_MB_S * 1e6);

    const lines: string[] = [
      `target: peak RSS growth ≤ ${TARGET_MIB} MiB per operation (fresh child each; upper bound, see the comment in bench/transfer.ts); uploads over a ${LINK_MB_S} MB/s link`,
    ];
    let ok = true;
    const ops: Array<[Op, string, string]> = [
      ['upload-path', source, 'upload 1 GiB from a path        (uploadImage(path))'],
      ['download-file', dest, 'download 1 GiB to disk          (downloadToFile)'],
      ['upload-readable', source, 'upload 1 GiB from a Node Readable (uploadImage(fs.createReadStream))'],
    ];
    for (const [op, file, label] of ops) {
      const r = await runChild({ op, url: op === 'download-file' ? emu.url : link.url, key: emu.key, file, warmFile });
      let check = '';
      if (r.ok && op !== 'download-file' && r.name !== expectedName) check = ` — WRONG CONTENT: server named it ${r.name}, expected ${expectedName}`;
      if (r.ok && op === 'download-file') {
        const size = statSync(dest).size;
        if (r.bytes !== SIZE || size !== SIZE || !patternOk(dest, SIZE)) check = ` — WRONG CONTENT: ${r.bytes} bytes reported, ${size} on disk`;
        rmSync(dest, { force: true });
      }
      const pass = r.ok && check === '' && r.growth <= TARGET_MIB * MiB;
      ok &&= pass;
      const speed = r.ok ? `${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(0)} MB/s` : 'n/a';
      lines.push(
        `${label}: growth ${mib(r.growth)} (sampled ${mib(r.sampledPeak - r.baseline)}, baseline ${mib(r.baseline)}), ` +
          `${(r.ms / 1000).toFixed(1)} s, ${speed}${r.error ? ` — ERROR ${r.error}` : ''}${check}: ${pass ? 'PASS' : 'FAIL'}`,
      );
    }
    return { name, ok, lines };
  } finally {
    link?.close();
    emu?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child' && process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const result = await child(JSON.parse(process.argv[3] ?? '{}') as ChildSpec);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
