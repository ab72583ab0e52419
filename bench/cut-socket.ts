// How long after a job's end does run() settle when the job's WebSocket is cut mid-run?
// Against a real local server (PLATFORMUI_REAL_SERVER_URL; skipped with one line without it),
// through a TCP relay of the tests' own (test/real-server/relay.ts) that cuts the job's
// WebSocket mid-run and then, for 2 s, either refuses new ones ("refused") or lets them open
// and cuts them at once ("storm"). Two cases, by where the cut falls: four blurs before the
// job's end (it ends while the sockets are down), or at its first blur of a job that lasts
// the window and a second more (it ends after). The lag is from the job's end as the server
// recorded it (the `execution_success` timestamp in /history's status messages) to the moment
// the client settled. Side by side in the same run (interleaved): run() with its defaults,
// run() with a slow reconnect (the socket cannot be counted on to come back soon), and a
// hand-written baseline that reconnects at once and reads the record (/history) whenever its
// socket opens or says the job ended. Target: run()'s median lag ≤ 50 ms in every case (one
// short poll gap on loopback). Jobs run one at a time; about 3 minutes in all.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startRelay } from '../test/real-server/relay.ts';
import { blurChain } from '../test/real-server/workflows.ts';
import { median } from './registry.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = 5;
const DOWN_MS = 2000;
const TARGET_MS = 50;

/** The server's record of a job's run: its `execution_start` and `execution_success` timestamps (the history is written just after the job says it ended). */
async function timesOf(base: string, id: string): Promise<{ start: number; end: number }> {
  for (let read = 0; read < 100; read++) {
    const h = (await (await fetch(`${base}/history/${id}`)).json()) as Record<string, { status: { messages: Array<[string, { timestamp: number }]> } }>;
    const at = (type: string) => h[id]?.status.messages.find(([t]) => t === type)?.[1].timestamp;
    const [start, end] = [at('execution_start'), at('execution_success')];
    if (start !== undefined && end !== undefined) return { start, end };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`job ${id} has no execution_success in its history`);
}

/**
 * The hand-written client: a socket that reconnects at once whenever it closes, and a read of
 * the job's history whenever the socket opens or says the job ended. Resolves when it settles.
 */
function baseline(base: string, workflow: unknown, onMessage: (m: { type: string; data?: Record<string, unknown> }) => void): Promise<{ id: string; settledAt: number }> {
  const clientId = randomUUID();
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    let done = false;
    let submitted = false;
    let ws: WebSocket;
    // The server says a job ended just before it writes the job's history: after such a message, read until it is there.
    const check = async (ended = false) => {
      let h = (await (await fetch(`${base}/history/${id}`)).json()) as Record<string, unknown>;
      while (ended && !h[id]) h = (await (await fetch(`${base}/history/${id}`)).json()) as Record<string, unknown>;
      if (!h[id] || done) return;
      done = true;
      const settledAt = Date.now();
      ws.onclose = null;
      ws.close();
      resolve({ id, settledAt });
    };
    const connect = () => {
      if (done) return;
      ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws?clientId=${clientId}`);
      let gone = false;
      const again = () => void (gone || ((gone = true), connect()));
      ws.onopen = () => void (submitted && check().catch(reject));
      ws.onmessage = (ev) => {
        if (typeof ev.data !== 'string') return;
        const m = JSON.parse(ev.data) as { type: string; data?: { prompt_id?: string } };
        onMessage(m);
        if (m.data?.prompt_id === id && /^execution_(success|error|interrupted)$/.test(m.type)) void check(true).catch(reject);
      };
      ws.onclose = again;
      ws.onerror = again;
    };
    connect();
    ws!.addEventListener('open', async () => {
      const r = await fetch(`${base}/prompt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: workflow, prompt_id: id, client_id: clientId }) });
      if (!r.ok) return reject(new Error(`submit: ${r.status} ${await r.text()}`));
      submitted = true;
    }, { once: true });
  });
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = `run() settles within ${TARGET_MS} ms of a job's end after its socket was cut (real server)`;
  const target = process.env.PLATFORMUI_REAL_SERVER_URL;
  if (!target) return { name, ok: true, lines: ['skipped: set PLATFORMUI_REAL_SERVER_URL to a running local server (../shared/real-server/start.sh prints one)'] };
  const { CloudClient } = (await import(`${root}dist/index.js`)) as typeof import('../src/index.ts');
  type Client = InstanceType<typeof CloudClient>;
  const relay = await startRelay(new URL(target));
  const lines: string[] = [];
  let ok = true;
  let n = 0;
  const workflow = (blurs: number) => blurChain(blurs, `bench_cut_${Date.now()}_${n++}`, { class_type: 'EmptyImage', inputs: { width: 256, height: 256, batch_size: 1, color: Math.floor(Math.random() * 0xffffff) } });

  // A blur's duration on this machine (warmed up), to size the jobs that must outlast the window.
  const probe = new CloudClient({ baseUrl: target });
  let blurMs = 0;
  for (let i = 0; i < 2; i++) {
    const { start, end } = await timesOf(target, (await probe.run(workflow(10))).promptId);
    blurMs = (end - start) / 10;
  }
  probe.close();

  const sdk = {
    'run()': (c: Client) => c,
    'run(), slow reconnect': (c: Client) => (c.connect({ reconnect: { baseDelay: 4000, maxDelay: 10_000 } }), c),
  };
  const sides = [...Object.keys(sdk), 'baseline'];
  // Where the cut falls: [blurs in the job, the node whose start cuts].
  const cases = {
    'ends while down': () => [8, '104'] as const,
    'ends after': () => [Math.ceil((DOWN_MS + 1000) / blurMs), '100'] as const,
  };
  try {
    for (const mode of ['refused', 'storm'] as const) {
      for (const [when, shape] of Object.entries(cases)) {
        const lags: Record<string, number[]> = Object.fromEntries(sides.map((s) => [s, []]));
        const offCase: string[] = [];
        for (let i = 0; i < RUNS; i++) {
          for (const side of i % 2 ? [...sides].reverse() : sides) {
            const [blurs, cutNode] = shape();
            let cutAt = 0;
            const onMessage = (m: { type: string; data?: Record<string, unknown> }) => {
              if (m.type === 'executing' && m.data?.node === cutNode && !cutAt) (cutAt = Date.now()), relay.cut(mode, DOWN_MS);
            };
            let id: string;
            let settledAt: number;
            if (side === 'baseline') ({ id, settledAt } = await baseline(relay.url, workflow(blurs), onMessage));
            else {
              const c = sdk[side as keyof typeof sdk](new CloudClient({ baseUrl: relay.url, logLevel: 'error' }));
              id = (await c.run(workflow(blurs), { onEvent: (e) => onMessage(e as never) })).promptId;
              settledAt = Date.now();
              c.close();
            }
            const { start, end } = await timesOf(target, id);
            lags[side]!.push(settledAt - end);
            blurMs = (blurMs + (end - start) / blurs) / 2; // blurs take longer or shorter as the machine is busy
            // Each run must be the case it is counted in: cut mid-run, ended while down or after.
            if (!(cutAt && cutAt < end && (end - cutAt < DOWN_MS) === (when === 'ends while down'))) offCase.push(`${side}: ended ${end - cutAt} ms after the cut`);
            // The next job starts once the relay lets sockets through again.
            await relay.up();
          }
        }
        const base = median(lags.baseline!);
        lines.push(`${mode}, ${when}: median lag after the job's end, ${RUNS} runs each`);
        if (offCase.length) lines.push(`  (${offCase.length} run(s) off their case: ${offCase.join('; ')})`);
        for (const side of sides) {
          const m = median(lags[side]!);
          const pass = side === 'baseline' || m <= TARGET_MS;
          ok &&= pass;
          const vs = side === 'baseline' ? '' : `, ${m - base >= 0 ? '+' : ''}${m - base} ms vs baseline${pass ? '' : ` FAIL (target ≤ ${TARGET_MS} ms)`}`;
          lines.push(`  ${side.padEnd(22)} ${String(m).padStart(5)} ms  [${lags[side]!.join(', ')}]${vs}`);
        }
      }
    }
  } finally {
    await relay.close();
  }
  return { name, ok, lines };
}
