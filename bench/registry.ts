// searchNodes({ limit: 100 }) through the SDK vs raw fetch + JSON.parse, against
// the emulator running in a child process (so the server does not share the
// client's event loop). Calls are interleaved, alternating which goes first,
// so drift hits both sides alike. Target: median ratio ≤ 1.15.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const CALLS = 1000;
const WARMUP = 100;
const TARGET = 1.15;

export async function startEmulatorProcess(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [`${root}dist/emulator-cli.js`, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  while (!/http:\/\/\S+/.test(out)) {
    const [chunk] = (await once(child.stdout, 'data')) as [string];
    out += chunk;
  }
  const url = /http:\/\/[^\s/]+/.exec(out)![0];
  return { url, stop: () => child.kill() };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'searchNodes({ limit: 100 }) vs raw fetch + JSON.parse';
  const { RegistryClient } = (await import(`${root}dist/index.js`)) as typeof import('../src/index.ts');
  const emu = await startEmulatorProcess();
  try {
    const registry = new RegistryClient({ baseUrl: emu.url });
    const rawUrl = `${emu.url}/nodes/search?limit=100&page=1`;
    const sdk = async () => {
      const t = performance.now();
      const page = await registry.searchNodes({ limit: 100 });
      if (page.nodes.length === 0) throw new Error('empty page');
      return performance.now() - t;
    };
    const raw = async () => {
      const t = performance.now();
      const res = await fetch(rawUrl);
      const body = JSON.parse(await res.text()) as { nodes: unknown[] };
      if (body.nodes.length === 0) throw new Error('empty page');
      return performance.now() - t;
    };
    for (let i = 0; i < WARMUP; i++) await sdk(), await raw();
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      if (i % 2) a.push(await sdk()), b.push(await raw());
      else b.push(await raw()), a.push(await sdk());
    }
    const ratio = median(a) / median(b);
    const ok = ratio <= TARGET;
    return {
      name,
      ok,
      lines: [
        `${CALLS} calls each, interleaved; ${(await registry.searchNodes({ limit: 100 })).nodes.length} nodes per page`,
        `median SDK ${median(a).toFixed(3)} ms, raw ${median(b).toFixed(3)} ms → ratio ${ratio.toFixed(3)} (target ≤ ${TARGET}): ${ok ? 'PASS' : 'FAIL'}`,
      ],
    };
  } finally {
    emu.stop();
  }
}
