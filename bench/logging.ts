// What logging costs per request (issue 14): `searchNodes({ limit: 100 })` on the
// minimal page server of request.ts, by clients that differ only in their log:
// the default (level warn: the request's debug lines are never built), `logLevel:
// 'off'`, and `logLevel: 'debug'` into a logger that drops every line (what
// building and redacting the lines costs, without any I/O). Interleaved rounds,
// medians, ratios against the default in the same run. Target: 'off' within
// noise of the default (≤ 1.03×), the measure that "logging costs nothing when off".
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { median } from './registry.ts';
import { interleave, nodePage, startPageServer } from './request.ts';

const root = new URL('..', import.meta.url);
const ROUNDS = 1000;
const WARMUP = 200;
const TARGET = 1.03;

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = "searchNodes with logLevel 'off' / 'debug' vs the default log";
  const { RegistryClient } = (await import(new URL('dist/index.js', root).href)) as typeof import('../src/index.ts');
  const server = await startPageServer(JSON.stringify(nodePage(100)));
  let lines = 0;
  const drop = () => void lines++;
  try {
    const clients = {
      default: new RegistryClient({ baseUrl: server.url }),
      off: new RegistryClient({ baseUrl: server.url, logLevel: 'off' }),
      debug: new RegistryClient({ baseUrl: server.url, logLevel: 'debug', logger: { error: drop, warn: drop, info: drop, debug: drop } }),
    };
    const call = (c: InstanceType<typeof RegistryClient>) => async () => {
      const page = await c.searchNodes({ limit: 100 });
      if (page.nodes.length !== 100) throw new Error('short page');
    };
    const [d, off, debug] = (await interleave([call(clients.default), call(clients.off), call(clients.debug)], ROUNDS, WARMUP)) as [number[], number[], number[]];
    const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
    const offRatio = median(off) / median(d);
    const debugRatio = median(debug) / median(d);
    const ok = offRatio <= TARGET;
    return {
      name,
      ok,
      lines: [
        `${ROUNDS} interleaved rounds after ${WARMUP} warm-up; page of 100 nodes; ${lines} debug lines built and dropped`,
        `${'median per call'.padEnd(44)}  ${'µs'.padStart(7)}  ${'vs default'.padStart(10)}`,
        `${'default (warn: no line built on a good day)'.padEnd(44)}  ${us(median(d)).padStart(7)}  ${'1.000×'.padStart(10)}`,
        `${"logLevel: 'off'".padEnd(44)}  ${us(median(off)).padStart(7)}  ${`${offRatio.toFixed(3)}×`.padStart(10)}`,
        `${"logLevel: 'debug', a logger that drops lines".padEnd(44)}  ${us(median(debug)).padStart(7)}  ${`${debugRatio.toFixed(3)}×`.padStart(10)}`,
        `'off' vs default ${offRatio.toFixed(3)}×, target ≤ ${TARGET.toFixed(2)}× (noise): ${ok ? 'PASS' : 'FAIL'}`,
      ],
    };
  } finally {
    await server.stop();
  }
}
