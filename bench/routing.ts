// Per-event cost of the socket pipeline (parse, validate, route by prompt_id)
// with 1,000 jobs subscribed vs 1. Routing is a Map lookup, so the cost per
// event should not depend on how many jobs are followed: target ≤ 1.2×.
// The socket gets a stand-in WebSocket, so only the SDK's own work is timed.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const EVENTS = 200_000;
const ROUNDS = 5;
const TARGET = 1.2;

/** A WebSocket that opens at once and lets the bench push messages. */
class FakeSocket {
  static last: FakeSocket | undefined;
  binaryType = 'blob';
  readyState = 0;
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor() {
    FakeSocket.last = this;
    queueMicrotask(() => {
      this.readyState = 1;
      this.onopen?.();
    });
  }
  send(): void {}
  close(): void {
    this.readyState = 3;
  }
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'event routing: 1,000 concurrent jobs vs 1';
  const { CloudClient } = (await import(`${root}dist/index.js`)) as typeof import('../src/index.ts');

  async function perEvent(jobs: number): Promise<number> {
    const cloud = new CloudClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'bench-key' });
    const socket = cloud.connect({ WebSocket: FakeSocket as never });
    await socket.ready();
    const ws = FakeSocket.last!;
    let received = 0;
    const ids = Array.from({ length: jobs }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const id of ids) socket.subscribe(id, () => void received++);
    // Same messages for both runs, spread over the subscribed ids.
    const messages = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify({ type: 'progress', data: { value: i % 20, max: 20, prompt_id: ids[i % jobs], node: '3' } }),
    );
    let best = Infinity;
    for (let r = 0; r < ROUNDS; r++) {
      const t = performance.now();
      for (let i = 0; i < EVENTS; i++) ws.onmessage!({ data: messages[i % 1000] });
      best = Math.min(best, performance.now() - t);
    }
    if (received !== EVENTS * ROUNDS) throw new Error(`routed ${received} of ${EVENTS * ROUNDS} events`);
    cloud.close();
    return (best / EVENTS) * 1e6; // ns per event
  }

  await perEvent(1); // warm-up
  const one = await perEvent(1);
  const many = await perEvent(1000);
  const ratio = many / one;
  const ok = ratio <= TARGET;
  return {
    name,
    ok,
    lines: [
      `${EVENTS} progress events per round, best of ${ROUNDS}`,
      `1 job: ${one.toFixed(0)} ns/event; 1,000 jobs: ${many.toFixed(0)} ns/event → ratio ${ratio.toFixed(3)} (target ≤ ${TARGET}): ${ok ? 'PASS' : 'FAIL'}`,
    ],
  };
}
