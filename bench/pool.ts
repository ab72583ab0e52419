// CloudPool (issue 17), two figures against emulators of the local personality
// (one shared queue that executes one job at a time, as a real local server does):
//
// (a) Throughput: 60 short jobs (EmptyImage → ImageInvert → SaveImage, each one
//     unique so that no server answers from its cache; STEP_MS × (1 + 2 × STEPS)
//     ≈ 75 ms of execution each) handed at once to a CloudPool over 3 servers, vs
//     the same 60 jobs to a CloudPool over 1 server (and, for reference, 60
//     concurrent CloudClient.run() on 1 server). Ratio = time over 1 / time over 3.
//     Target: ≥ 2.6× (3× is the ceiling: execution dominates).
// (b) The pool's own cost per job: M jobs, one at a time, through CloudClient.run()
//     and through a one-server CloudPool, on one emulator whose jobs take no time
//     (stepMs 0), interleaved in rounds (alternating which side goes first) after a
//     warm-up; the difference of the medians (and of the means) per job. Target: ≤ 1 ms.
//     Also printed: CPU time per job of each side (this process: client, pool and
//     emulator together), a steadier sign of the pool's own work than wall time.
// (c) A fresh pool's first burst (issue 23): the same 60 jobs handed at once to a new
//     CloudPool over 3 servers, without waiting for its servers to answer first, and no
//     maxConcurrent limit (60): its first jobs wait for every server's first answer (the
//     start window) and then spread. Target: every server runs at least a quarter of them
//     (before the window, the server that answered first took all 60).
//
// Every emulator runs in this process: its cost is the same for both sides of each
// comparison. Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { fileURLToPath } from 'node:url';
import { median } from './registry.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const JOBS = 60;
const SERVERS = 3;
const STEP_MS = 15;
const STEPS = 2;
const RATIO_TARGET = 2.6;
const ROUNDS = 300;
const WARMUP = 40;
const COST_TARGET_MS = 1;

type Sdk = typeof import('../src/index.ts');
type Emu = typeof import('../src/emulator/index.ts');

let unique = 0;
/** A job no server has seen (its colour and prefix differ), so none answers from its cache. Shared with bench/queue.ts. */
export function job(tag: string) {
  const n = unique++;
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: n % 0xffffff } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: `bench_${tag}_${n}` } },
  };
}

/** Resolves once every server of the pool is up (its nodes read). */
async function ready(pool: InstanceType<Sdk['CloudPool']>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (pool.servers.every((s) => s.state === 'up')) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`pool servers not up after 4 s: ${JSON.stringify(pool.servers)}`);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'CloudPool: 60 jobs over 3 servers vs 1, a fresh pool’s first burst, and its cost per job vs CloudClient.run()';
  const { CloudClient, CloudPool } = (await import(`${root}dist/index.js`)) as Sdk;
  const { startEmulator } = (await import(`${root}dist/emulator.js`)) as Emu;
  const lines: string[] = [];
  let ok = true;

  // ------------------------------------------------------------ (a) throughput
  {
    const emus = await Promise.all(Array.from({ length: SERVERS }, () => startEmulator({ personality: 'local', cloud: { stepMs: STEP_MS, progressSteps: STEPS } })));
    try {
      const timeJobs = async (runOne: (w: ReturnType<typeof job>) => Promise<unknown>, tag: string) => {
        const t0 = performance.now();
        const results = await Promise.all(Array.from({ length: JOBS }, () => runOne(job(tag))));
        return { ms: performance.now() - t0, results };
      };
      const overPool = async (n: number, tag: string) => {
        const pool = new CloudPool(emus.slice(0, n).map((e, i) => ({ baseUrl: e.url, id: `s${i}` })));
        try {
          await ready(pool);
          return await timeJobs((w) => pool.run(w, { timeout: 60_000 }), tag);
        } finally {
          await pool.close();
        }
      };
      const overClient = async (tag: string) => {
        const c = new CloudClient({ baseUrl: emus[0]!.url });
        try {
          c.connect();
          return await timeJobs((w) => c.run(w, { timeout: 60_000 }), tag);
        } finally {
          c.close();
        }
      };
      // Warm-up (JIT, sockets, the emulators' first jobs), not timed.
      await overPool(SERVERS, 'warm3');
      await overPool(1, 'warm1');
      const one = await overPool(1, 'one');
      const client = await overClient('client');
      const three = await overPool(SERVERS, 'three');
      const ratio = one.ms / three.ms;
      const spread = new Map<string, number>();
      for (const { server } of three.results as Array<{ server: string }>) spread.set(server, (spread.get(server) ?? 0) + 1);
      const jobMs = STEP_MS * (1 + 2 * STEPS);
      const pass = ratio >= RATIO_TARGET;
      ok &&= pass;
      lines.push(`(a) ${JOBS} jobs of ~${jobMs} ms execution each (stepMs ${STEP_MS}, progressSteps ${STEPS}), local personality (one job at a time per server)`);
      lines.push(`    pool over 1 server:          ${one.ms.toFixed(0).padStart(6)} ms  (${(one.ms / JOBS).toFixed(1)} ms/job; ideal ${JOBS * jobMs} ms)`);
      lines.push(`    CloudClient.run() x${JOBS}, 1 server: ${client.ms.toFixed(0).padStart(6)} ms  (reference)`);
      lines.push(`    pool over ${SERVERS} servers:         ${three.ms.toFixed(0).padStart(6)} ms  (${(three.ms / JOBS).toFixed(1)} ms/job; ideal ${Math.ceil(JOBS / SERVERS) * jobMs} ms); jobs per server ${[...spread.entries()].sort().map(([s, n]) => `${s}=${n}`).join(' ')}`);
      lines.push(`    throughput ratio ${ratio.toFixed(2)}x (target >= ${RATIO_TARGET}x): ${pass ? 'PASS' : 'FAIL'}`);

      // (c) a fresh pool's first burst, nothing limiting where the jobs go but the placement itself.
      const fresh = new CloudPool(emus.map((e, i) => ({ baseUrl: e.url, id: `s${i}`, maxConcurrent: JOBS })));
      try {
        const burst = await timeJobs((w) => fresh.run(w, { timeout: 60_000 }), 'burst');
        const per = new Map<string, number>();
        for (const { server } of burst.results as Array<{ server: string }>) per.set(server, (per.get(server) ?? 0) + 1);
        const fewest = Math.min(...Array.from({ length: SERVERS }, (_, i) => per.get(`s${i}`) ?? 0));
        const spreadPass = fewest >= JOBS / 4;
        ok &&= spreadPass;
        lines.push(`(c) a fresh pool over ${SERVERS} servers (maxConcurrent ${JOBS}) handed the ${JOBS} jobs at once: ${burst.ms.toFixed(0)} ms, jobs per server ${[...per.entries()].sort().map(([id, n]) => `${id}=${n}`).join(' ')}`);
        lines.push(`    fewest on one server ${fewest} (target >= ${JOBS / 4}): ${spreadPass ? 'PASS' : 'FAIL'}`);
      } finally {
        await fresh.close();
      }
    } finally {
      await Promise.all(emus.map((e) => e.close()));
    }
  }

  // ------------------------------------------------------------ (b) the pool's cost per job
  {
    const emu = await startEmulator({ personality: 'local', cloud: { stepMs: 0, progressSteps: 1 } });
    const c = new CloudClient({ baseUrl: emu.url });
    c.connect();
    const pool = new CloudPool([{ baseUrl: emu.url, id: 'only' }]);
    try {
      await ready(pool);
      const sides: Array<[string, () => Promise<unknown>]> = [
        ['client', () => c.run(job('c'), { timeout: 30_000 })],
        ['pool', () => pool.run(job('p'), { timeout: 30_000 })],
      ];
      const times: number[][] = [[], []];
      const cpu = [0, 0]; // µs of this process's CPU (client, pool and emulator alike) per side
      for (let r = 0; r < WARMUP + ROUNDS; r++) {
        for (let k = 0; k < 2; k++) {
          const j = (r + k) % 2;
          const u = process.cpuUsage();
          const t = performance.now();
          await sides[j]![1]();
          if (r >= WARMUP) {
            times[j]!.push(performance.now() - t);
            const d = process.cpuUsage(u);
            cpu[j]! += d.user + d.system;
          }
        }
      }
      const [cc, pc] = [cpu[0]! / ROUNDS / 1000, cpu[1]! / ROUNDS / 1000];
      const [cm, pm] = [median(times[0]!), median(times[1]!)];
      const [ca, pa] = [mean(times[0]!), mean(times[1]!)];
      const cost = pm - cm;
      const pass = cost <= COST_TARGET_MS;
      ok &&= pass;
      lines.push(`(b) ${ROUNDS} jobs each side, one at a time, interleaved (after ${WARMUP} warm-up rounds), stepMs 0`);
      lines.push(`    CloudClient.run():     median ${cm.toFixed(3)} ms/job, mean ${ca.toFixed(3)} ms/job, CPU ${cc.toFixed(3)} ms/job`);
      lines.push(`    one-server CloudPool:  median ${pm.toFixed(3)} ms/job, mean ${pa.toFixed(3)} ms/job, CPU ${pc.toFixed(3)} ms/job`);
      lines.push(`    CPU (client + emulator, one process): pool ${(pc - cc >= 0 ? '+' : '')}${(pc - cc).toFixed(3)} ms/job (wall time per job is quantised by the emulator's 1 ms timers)`);
      lines.push(`    pool's added cost ${cost.toFixed(3)} ms/job by medians (${(pa - ca).toFixed(3)} by means) (target <= ${COST_TARGET_MS} ms): ${pass ? 'PASS' : 'FAIL'}`);
    } finally {
      await pool.close();
      c.close();
      await emu.close();
    }
  }
  return { name, lines, ok };
}
