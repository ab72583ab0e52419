// Ours (CloudClient, server: 'v2') against the official @comfyorg/sdk (0.1.9, a devDependency of this bench only),
// side by side in one run on a REAL Comfy API v2 server (comfy-api-proxy in front of ComfyUI), named by
// PLATFORMUI_V2_URL (`url=$(../shared/real-server/v2/start.sh)`; skipped with one line without it). The ComfyUI
// behind it (its /api/v2/health `upstream`, or PLATFORMUI_V2_COMFY_URL) gives the job's own timestamps (/history).
// Runs are interleaved (ours, theirs, theirs, ours, …) and medians reported, with ratios ours/theirs:
//   W1         one small job (EmptyImage → SaveImage), submit to result. Target: ≤ 1.0×.
//   20 at once twenty small jobs at once, to the last result. Target: ≤ 1.0×.
//   cancel     a running job (ImageBlur chain) cancelled after its 2nd node: ms from the cancel to `canceled` on the
//              server (a poller of the bench's own), ms to the SDK call settling, nodes finished after the cancel.
//   same input the second run of the same ~4 MB input: bytes of it sent (counted by a relay), each SDK its own file.
//   SSE cut    the connections of a running job cut after its 2nd node: ms from the job's end (ComfyUI's
//              execution_success timestamp) to settled (ours: run() resolves; theirs: events() ends at the
//              terminal status — their run() polls only).
//   BLAKE3     MB/s of a 100 MB file (ours: blake3() of src/cloud/v2/hash.ts; theirs: hashFile()).
// Usage: npm run bench:v2 (builds first), or as part of npm run bench. Figures: /work/v2-bench.md.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { comfyBehind, invertWorkflow, longWorkflow, noisePng, startV2Relay, tinyWorkflow, type ApiWorkflow } from '../test/real-server/v2-helpers.ts';
import { median } from './registry.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_V2_RUNS ?? 5);
const CANCEL_RUNS = Number(process.env.BENCH_V2_CANCEL_RUNS ?? 3);
/** BENCH_V2_ONLY=w1,x20,cancel,same,cut,blake3: only those parts (default: all). */
const only = process.env.BENCH_V2_ONLY?.split(',');
const part = (name: string) => !only || only.includes(name);
const trace = process.env.BENCH_V2_TRACE ? (...a: unknown[]) => console.error(new Date().toISOString(), ...a) : () => undefined;

type Sdk = typeof import('../src/index.ts');
type Official = typeof import('@comfyorg/sdk');
type OurClient = InstanceType<Sdk['CloudClient']>;
type TheirClient = InstanceType<Official['Comfy']>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The official SDK takes its base URL from COMFY_BASE_URL when constructed. */
function official(O: Official, baseUrl: string): TheirClient {
  const before = process.env.COMFY_BASE_URL;
  process.env.COMFY_BASE_URL = baseUrl;
  try {
    return new O.Comfy();
  } finally {
    if (before === undefined) delete process.env.COMFY_BASE_URL;
    else process.env.COMFY_BASE_URL = before;
  }
}

/** `order(i)`: ours first on even runs, theirs first on odd ones. */
const order = <T>(i: number, pair: [T, T]): [T, T] => (i % 2 ? [pair[1], pair[0]] : pair);

/** A job's end on ComfyUI: the timestamp of its execution_success / execution_interrupted, and the nodes it had executed. */
async function historyOf(comfy: string, id: string): Promise<{ end?: number; interruptedAt?: number; executed?: number }> {
  for (let i = 0; i < 50; i++) {
    const h = (await (await fetch(`${comfy}/history/${id}`)).json()) as Record<string, { status?: { messages?: [string, Record<string, unknown>][] } }>;
    const messages = h[id]?.status?.messages;
    if (messages) {
      const success = messages.find(([t]) => t === 'execution_success')?.[1];
      const interrupted = messages.find(([t]) => t === 'execution_interrupted')?.[1];
      return { end: success?.timestamp as number | undefined, interruptedAt: interrupted?.timestamp as number | undefined, executed: Array.isArray(interrupted?.executed) ? interrupted.executed.length : undefined };
    }
    await sleep(100);
  }
  return {};
}

/** Follows a job's SSE stream on the server directly (not through any SDK): its latest nodes_done. */
function observe(v2: string, id: string) {
  const ac = new AbortController();
  const state = { nodesDone: 0, waiters: [] as { n: number; resolve: () => void }[] };
  const wake = () => (state.waiters = state.waiters.filter((w) => (state.nodesDone >= w.n ? (w.resolve(), false) : true)));
  void (async () => {
    const res = await fetch(`${v2}/api/v2/jobs/${id}/events`, { signal: ac.signal });
    trace('observer', id, res.status);
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      for (let i; (i = buf.indexOf('\n\n')) >= 0; ) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        trace('frame', id, frame.replace(/\n/g, ' | ').slice(0, 120));
        if (/^event: progress$/m.test(frame) && data) {
          const p = JSON.parse(data) as { nodes_done?: number };
          if (typeof p.nodes_done === 'number' && p.nodes_done > state.nodesDone) (state.nodesDone = p.nodes_done), wake();
        }
      }
    }
  })().catch(() => undefined);
  return {
    get nodesDone() {
      return state.nodesDone;
    },
    /** Resolves once `n` nodes are done. */
    atNodes: (n: number) => new Promise<void>((resolve) => (state.nodesDone >= n ? resolve() : state.waiters.push({ n, resolve }))),
    close: () => ac.abort(),
  };
}

/** Polls the server every 25 ms until `id` reads one of `statuses`; resolves with the time it first did. */
async function seen(v2: string, id: string, statuses: string[]): Promise<number> {
  for (;;) {
    const job = (await (await fetch(`${v2}/api/v2/jobs/${id}`)).json()) as { status: string };
    if (statuses.includes(job.status)) return Date.now();
    await sleep(25);
  }
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
const ratioLine = (label: string, ours: number[], theirs: number[], unit: (x: number) => string, target?: number) => {
  const [o, t] = [median(ours), median(theirs)];
  const r = o / t;
  const verdict = target === undefined ? '' : ` (target ≤ ${target.toFixed(1)}×): ${r <= target ? 'PASS' : 'FAIL'}`;
  return { line: `${label}: ours ${unit(o)}, theirs ${unit(t)} (medians of ${ours.length}/${theirs.length}); ours/theirs ${r.toFixed(2)}×${verdict}`, pass: target === undefined || r <= target };
};

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'Comfy API v2: ours vs the official @comfyorg/sdk (real server)';
  const v2 = process.env.PLATFORMUI_V2_URL?.replace(/\/+$/, '');
  if (!v2) return { name, ok: true, lines: ['skipped: set PLATFORMUI_V2_URL to a running v2 server (../shared/real-server/v2/start.sh prints one)'] };
  const { CloudClient } = (await import(`${root}dist/index.js`)) as Sdk;
  const O = (await import('@comfyorg/sdk')) as Official;
  const comfy = await comfyBehind(v2);
  const lines: string[] = [];
  let ok = true;
  const note = (r: { line: string; pass: boolean }) => (lines.push(r.line), (ok &&= r.pass));
  const dir = mkdtempSync(join(tmpdir(), 'bench-v2-'));
  const ours = new CloudClient({ baseUrl: v2, server: 'v2', logLevel: 'off' });
  const theirs = official(O, v2);
  let seq = 0;
  const prefix = (what: string) => `bench_v2_${what}_${Date.now()}_${seq++}`;
  const oursRun = (c: OurClient, wf: ApiWorkflow, options = {}) => c.run(wf, options);
  const theirsRun = (c: TheirClient, wf: ApiWorkflow) => c.run(c.workflows.fromJson(structuredClone(wf)));
  try {
    // Warm-up: both clients, both code paths (and ours learns how this server takes the key's label).
    await oursRun(ours, tinyWorkflow(prefix('warm')));
    await theirsRun(theirs, tinyWorkflow(prefix('warm')));

    // ---- W1 ----
    if (part('w1')) {
      trace('w1');
      const t: [number[], number[]] = [[], []];
      for (let i = 0; i < RUNS; i++) {
        for (const side of order(i, [0, 1] as const)) {
          const t0 = performance.now();
          if (side === 0) {
            const r = await oursRun(ours, tinyWorkflow(prefix('w1')));
            if (r.files.length !== 1) throw new Error('ours: W1 without its file');
          } else {
            const job = await theirsRun(theirs, tinyWorkflow(prefix('w1')));
            if (job.outputs.length !== 1) throw new Error('theirs: W1 without its output');
          }
          t[side].push(performance.now() - t0);
        }
      }
      note(ratioLine('W1 one small job, submit to result', t[0], t[1], fmt, 1.0));
    }

    // ---- 20 at once ----
    if (part('x20')) {
      trace('x20');
      const t: [number[], number[]] = [[], []];
      for (let i = 0; i < Math.max(3, Math.ceil(RUNS / 2)); i++) {
        for (const side of order(i, [0, 1] as const)) {
          const wfs = Array.from({ length: 20 }, () => tinyWorkflow(prefix('x20')));
          const t0 = performance.now();
          if (side === 0) await Promise.all(wfs.map((wf) => oursRun(ours, wf)));
          else await Promise.all(wfs.map((wf) => theirsRun(theirs, wf)));
          t[side].push(performance.now() - t0);
        }
      }
      note(ratioLine('20 small jobs at once, to the last result', t[0], t[1], fmt, 1.0));
    }

    // ---- cancel of a running job ----
    if (part('cancel')) {
      trace('cancel');
      const toServer: [number[], number[]] = [[], []];
      const toSettled: [number[], number[]] = [[], []];
      const after: [number[], number[]] = [[], []];
      for (let i = 0; i < CANCEL_RUNS; i++) {
        for (const side of order(i, [0, 1] as const)) {
          const wf = longWorkflow(10, prefix('cancel'));
          let id: string;
          let theirJob: Awaited<ReturnType<TheirClient['submit']>> | undefined;
          if (side === 0) id = (await ours.submit(wf)).prompt_id;
          else id = (theirJob = await theirs.submit(theirs.workflows.fromJson(wf))).id;
          const obs = observe(v2, id);
          await obs.atNodes(2);
          const doneAtCancel = obs.nodesDone;
          const t0 = Date.now();
          const server = seen(v2, id, ['canceled', 'expired', 'succeeded', 'failed']);
          if (side === 0) await ours.stopJob(id);
          else {
            await theirJob!.cancel();
            await theirJob!.wait().catch(() => undefined);
            if (theirJob!.status !== 'canceled') lines.push(`  theirs: job ${id} reads ${theirJob!.status} after cancel() and wait()`);
          }
          toSettled[side].push(Date.now() - t0);
          toServer[side].push((await server) - t0);
          obs.close();
          const h = await historyOf(comfy, id);
          // `executed` counts the EmptyImage too; nodes_done counts every node finished, EmptyImage included.
          if (h.executed !== undefined) after[side].push(Math.max(0, h.executed - doneAtCancel));
          const final = (await (await fetch(`${v2}/api/v2/jobs/${id}`)).json()) as { status: string };
          if (final.status !== 'canceled') lines.push(`  ${side ? 'theirs' : 'ours'}: job ${id} ended ${final.status}, not canceled`);
        }
      }
      note(ratioLine('cancel of a running job, cancel → canceled on the server', toServer[0], toServer[1], fmt));
      note(ratioLine('cancel of a running job, cancel → the SDK call settled', toSettled[0], toSettled[1], fmt));
      lines.push(`cancel of a running job, nodes finished after the cancel: ours ${after[0].join(', ')}; theirs ${after[1].join(', ')}`);
    }

    // ---- the second run of the same input ----
    if (part('same')) {
      trace('same');
      const relay = await startV2Relay(v2);
      const viaOurs = new CloudClient({ baseUrl: relay.url, server: 'v2', logLevel: 'off' });
      const viaTheirs = official(O, relay.url);
      try {
        await oursRun(viaOurs, tinyWorkflow(prefix('warm')));
        const files = [0, 1].map((side) => {
          const { png } = noisePng(1150, 1150);
          const file = join(dir, `same-${side}-${Date.now()}.png`);
          writeFileSync(file, png);
          return { file, size: png.byteLength };
        });
        const sent: [number[], number[]] = [[], []];
        for (let i = 0; i < 2; i++) {
          for (const side of order(i, [0, 1] as const)) {
            relay.take();
            if (side === 0) await oursRun(viaOurs, invertWorkflow(prefix('same')), { inputs: { '1.inputs.image': files[0]!.file } });
            else {
              // A new handle each run, as a new process would make: the SDK hashes, asks the server, uploads if needed.
              const wf = viaTheirs.workflows.fromJson(invertWorkflow(prefix('same')));
              wf.setInput('1', 'image', viaTheirs.assets.fromFile(files[1]!.file));
              await viaTheirs.run(wf);
            }
            sent[side].push(relay.take());
          }
        }
        const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
        lines.push(`same input (${kb(files[0]!.size)} / ${kb(files[1]!.size)} PNG), bytes sent by the client, all requests of each run: ours 1st ${kb(sent[0][0]!)}, 2nd ${kb(sent[0][1]!)}; theirs 1st ${kb(sent[1][0]!)}, 2nd ${kb(sent[1][1]!)}`);
        const pass = sent[0][1]! < 32_768 && sent[0][0]! > files[0]!.size;
        lines.push(`  ours sends none of the file the 2nd time: ${pass ? 'PASS' : 'FAIL'}; theirs: ${sent[1][1]! < 32_768 ? 'none' : 'SENT IT AGAIN'}`);
        ok &&= pass;
      } finally {
        viaOurs.close();
        await relay.close();
      }
    }

    // ---- SSE cut mid-job ----
    if (part('cut')) {
      trace('cut');
      for (const cut of [true, false]) {
      const lag: [number[], number[]] = [[], []];
      for (let i = 0; i < CANCEL_RUNS; i++) {
        for (const side of order(i, [0, 1] as const)) {
          const relay = await startV2Relay(v2);
          const c0 = new CloudClient({ baseUrl: relay.url, server: 'v2', logLevel: 'off' });
          const c1 = official(O, relay.url);
          try {
            if (side === 0) await oursRun(c0, tinyWorkflow(prefix('warm')));
            const wf = longWorkflow(5, prefix('cut'));
            let id = '';
            let settled: Promise<number>;
            let twoNodes: Promise<void> | undefined;
            if (side === 0) {
              let submitted!: () => void;
              const idKnown = new Promise<void>((r) => (submitted = r));
              let twoDone!: () => void;
              twoNodes = new Promise<void>((r) => (twoDone = r));
              // On v2 the progress is nodes done / nodes started so far: `value` is the count of nodes done.
              const onProgress = (p: { value: number }) => void (p.value >= 2 && twoDone());
              settled = c0.run(wf, { onSubmitted: (p) => void ((id = p), submitted()), onProgress }).then(() => Date.now());
              await idKnown;
            } else {
              const job = await c1.submit(c1.workflows.fromJson(wf));
              id = job.id;
              let twoDone!: () => void;
              twoNodes = new Promise<void>((r) => (twoDone = r));
              settled = (async () => {
                for await (const ev of job.events()) {
                  if (ev.kind === 'progress' && (ev.nodesDone ?? 0) >= 2) twoDone();
                  if (ev.kind === 'statusChange' && ['succeeded', 'failed', 'canceled', 'expired'].includes(ev.status)) break;
                }
                return Date.now();
              })();
            }
            trace('cut', side, id);
            // When to cut: each SDK's own progress, not a stream of the bench's: the proxy feeds one job's progress
            // to ONE of its open streams (a second stream of the same job gets only `running`, then the terminal
            // status after 15 s of silence).
            // A job whose progress never reached two nodes (its frames went to no stream of ours) is not cut: it still settles.
            await Promise.race([twoNodes, settled]);
            trace('cutting', side, id);
            if (cut) relay.cutAll();
            const at = await settled;
            trace('settled', side, id);
            const { end } = await historyOf(comfy, id);
            if (end !== undefined) lag[side].push(at - end);
          } finally {
            c0.close();
            await relay.close();
          }
        }
      }
      note(ratioLine(cut ? "SSE cut mid-job, the job's end → settled" : "  the same job, no cut (baseline)", lag[0], lag[1], fmt));
      }
    }

    // ---- BLAKE3 ----
    if (part('blake3')) {
      trace('blake3');
      const file = join(dir, 'blake3-100mb.bin');
      writeFileSync(file, randomBytes(100 * 1_000_000));
      const { blake3 } = (await import(`${root}src/cloud/v2/hash.ts`)) as typeof import('../src/cloud/v2/hash.ts');
      const { hashFile } = (await import(`${root}node_modules/@comfyorg/sdk/dist/sdk/hashing.js`)) as { hashFile(path: string): Promise<string> };
      const mbps: [number[], number[]] = [[], []];
      const hashes: [string, string] = ['', ''];
      for (let i = 0; i < 3; i++) {
        for (const side of order(i, [0, 1] as const)) {
          const t0 = performance.now();
          hashes[side] = side === 0 ? (await blake3(file)).hash : await hashFile(file);
          mbps[side].push(100 / ((performance.now() - t0) / 1000));
        }
      }
      const [o, t] = [median(mbps[0]), median(mbps[1])];
      lines.push(`BLAKE3 of a 100 MB file: ours ${o.toFixed(0)} MB/s, theirs ${t.toFixed(0)} MB/s (medians of 3); ours/theirs ${(o / t).toFixed(2)}× (higher is faster); same hash: ${hashes[0] === hashes[1] ? 'yes' : 'NO'}`);
      ok &&= hashes[0] === hashes[1];
    }
  } finally {
    ours.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { name, lines, ok };
}

// Run by itself (npm run bench:v2): print like bench/index.ts does.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await run();
  console.log(`== ${r.name}`);
  for (const line of r.lines) console.log(`  ${line}`);
  console.log(r.ok ? '  within targets' : '  OVER A TARGET (informational)');
  process.exit(0);
}
