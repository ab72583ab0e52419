// Per-request overhead (issue 9): `new RegistryClient({ baseUrl }).searchNodes({ limit: 100 })`
// vs raw `fetch(url).then(r => r.text()).then(JSON.parse)`, against a minimal
// node:http server (not the emulator, whose own cost hides the SDK's) answering
// GET /nodes/search with one fixed 100-node page, built once, shaped like the
// registry spec's Node (with latest_version and publisher). The server runs in a
// worker thread, so its work does not share the client's event loop; both sides
// use the same global fetch (undici, keep-alive). After a warm-up, calls are
// interleaved in rounds, alternating which side goes first; the median per-call
// time of each side and their ratio. Target: ≤ 1.10×.
// Needs a build (dist/). Erasable TS only: run by `node --experimental-strip-types`.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { median } from './registry.ts';

const root = new URL('..', import.meta.url);
const ROUNDS = 1500;
const WARMUP = 200;
const TARGET = 1.1;

// ---------------------------------------------------------------- the page

const PUBLISHERS = [
  ['pixelforge', 'PixelForge Studio', 'Image upscaling and restoration nodes.', ['Ada Moreau', 'Kenji Sato']],
  ['lumen-labs', 'Lumen Labs', 'Lighting, relighting and colour tools.', ['Priya Raman', 'Tomás Ferreira', 'Lena Fischer']],
  ['nodesmith', 'Nodesmith', 'Utility, math and logic nodes for workflow builders.', ['Marta Kowalska']],
  ['vectorworks', 'VectorWorks', 'Segmentation, masks and vector output.', ['Samuel Okafor', 'Yuki Tanaka']],
  ['kinetic-ai', 'Kinetic AI', 'Video, animation and motion nodes.', ['Diego Alvarez', 'Hannah Berg']],
] as const;
const WORDS = ['upscale', 'relight', 'mask', 'denoise', 'video', 'prompt', 'depth', 'color', 'sampler', 'loader', 'texture', 'pose'];
const OS = [['OS Independent'], ['POSIX :: Linux', 'Microsoft :: Windows'], ['POSIX :: Linux', 'MacOS', 'Microsoft :: Windows'], ['MacOS :: MacOS X']];
const ACCEL = [['CUDA'], ['CUDA', 'ROCm'], ['CUDA', 'DirectML'], ['CPU'], ['CUDA', 'ROCm', 'DirectML', 'Metal']];
const DEPS = ['torch>=2.1', 'numpy>=1.24', 'pillow>=10.0', 'opencv-python-headless>=4.8', 'einops', 'safetensors>=0.4', 'transformers>=4.38'];

/** A deterministic registry page of `n` nodes (spec: registry-and-proxy.md, Node / NodeVersion / Publisher). */
export function nodePage(n: number): { limit: number; nodes: unknown[]; page: number; total: number; totalPages: number } {
  const iso = (i: number, k: number) => new Date(Date.UTC(2023, 5, 1) + i * 7_919_000_000 + k * 86_400_000).toISOString();
  const nodes = Array.from({ length: n }, (_, i) => {
    const [pid, pname, pdesc, members] = PUBLISHERS[i % PUBLISHERS.length]!;
    const w1 = WORDS[i % WORDS.length]!;
    const w2 = WORDS[(i * 7 + 3) % WORDS.length]!;
    const id = `${pid}-${w1}-${w2}-${i}`;
    const version = `${i % 3}.${(i * 5) % 13}.${(i * 11) % 21}`;
    const tags = [w1, w2];
    const os = OS[i % OS.length]!;
    const accel = ACCEL[(i * 3) % ACCEL.length]!;
    return {
      id,
      name: `${w1[0]!.toUpperCase()}${w1.slice(1)} ${w2[0]!.toUpperCase()}${w2.slice(1)} ${i}`,
      author: members[0],
      description: `${w1} and ${w2} tools: tiled processing, batch support and seam-free blending for large images.`,
      banner_url: `https://storage.platformui.example/banners/${id}.png`,
      icon: `https://storage.platformui.example/icons/${id}.svg`,
      ...(i % 4 === 0 ? { category: w1 } : {}),
      created_at: iso(i, 0),
      downloads: (i * 7_919) % 100_000,
      github_stars: (i * 131) % 5_000,
      license: i % 5 === 0 ? 'LICENSE.txt' : 'LICENSE',
      rating: Math.round((2.5 + ((i * 37) % 25) / 10) * 10) / 10,
      repository: `https://github.com/${pid}/${w1}-${w2}`,
      search_ranking: (i * 13) % 100,
      status: 'NodeStatusActive',
      supported_accelerators: accel,
      supported_platformui_frontend_version: '>=1.2.0',
      supported_platformui_version: i % 3 === 0 ? '>=0.3.0' : '>=0.2.0',
      supported_os: os,
      tags,
      latest_version: {
        id: `${(i * 2_654_435_761 >>> 0).toString(16).padStart(8, '0')}-1b2c-4d3e-8f40-${String(i).padStart(12, '0')}`,
        node_id: id,
        version,
        changelog: `Release ${version}: fixes and improvements.`,
        platform_node_extract_status: 'success',
        createdAt: iso(i, 30),
        dependencies: [DEPS[i % DEPS.length]!, DEPS[(i + 3) % DEPS.length]!],
        deprecated: false,
        downloadUrl: `https://storage.platformui.example/registry/${pid}/${id}/${version}/node.zip`,
        status: 'NodeVersionStatusActive',
        supported_accelerators: accel,
        supported_platformui_frontend_version: '>=1.2.0',
        supported_platformui_version: '>=0.2.0',
        supported_os: os,
        tags,
      },
      publisher: {
        id: pid,
        name: pname,
        description: pdesc,
        logo: `https://avatars.githubusercontent.example/${pid}.png`,
        members: members.map((m, k) => ({
          id: `member-${pid}-${k + 1}`,
          role: k === 0 ? 'owner' : 'maintainer',
          user: { id: `user-${pid}-${k + 1}`, name: m, email: `${m.toLowerCase().normalize('NFD').replace(/[^a-z ]/g, '').replace(/ /g, '.')}@${pid}.example` },
        })),
        source_code_repo: `https://github.com/${pid}`,
        status: 'PublisherStatusActive',
        support: `https://github.com/${pid}/support/issues`,
        website: `https://${pid}.example`,
        createdAt: iso(0, i % PUBLISHERS.length),
      },
    };
  });
  return { limit: n, nodes, page: 1, total: 1234, totalPages: Math.ceil(1234 / n) };
}

// ---------------------------------------------------------------- the server

// Runs in a worker (CJS or ESM eval alike, hence getBuiltinModule): answers GET /nodes/search with the fixed body, 404 otherwise.
const SERVER = `
const { createServer } = process.getBuiltinModule('node:http');
const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
const body = Buffer.from(workerData.body);
const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/nodes/search')) { res.writeHead(200, headers); res.end(body); }
  else { res.writeHead(404, { 'content-type': 'application/json' }); res.end('{"error":"not_found","message":"no route"}'); }
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => process.exit(0)));
`;

/** Starts the page server in a worker thread. */
export async function startPageServer(body: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const worker = new Worker(SERVER, { eval: true, workerData: { body } });
  const [port] = (await once(worker, 'message')) as [number];
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      worker.postMessage('stop');
      await once(worker, 'exit');
    },
  };
}

/** Runs `fns` in ROUNDS interleaved rounds (rotating which goes first) after WARMUP rounds; per-call ms of each. */
export async function interleave(fns: (() => Promise<unknown>)[], rounds = ROUNDS, warmup = WARMUP): Promise<number[][]> {
  const times = fns.map(() => [] as number[]);
  for (let r = 0; r < warmup + rounds; r++) {
    for (let k = 0; k < fns.length; k++) {
      const j = (r + k) % fns.length;
      const t = performance.now();
      await fns[j]!();
      if (r >= warmup) times[j]!.push(performance.now() - t);
    }
  }
  return times;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'searchNodes({ limit: 100 }) vs raw fetch, minimal node:http server';
  const { RegistryClient } = (await import(new URL('dist/index.js', root).href)) as typeof import('../src/index.ts');
  const body = JSON.stringify(nodePage(100));
  const server = await startPageServer(body);
  try {
    const registry = new RegistryClient({ baseUrl: server.url });
    const rawUrl = `${server.url}/nodes/search?limit=100&page=1`;
    const sdk = async () => {
      const page = await registry.searchNodes({ limit: 100 });
      if (page.nodes.length !== 100) throw new Error('short page');
    };
    const raw = async () => {
      const page = (await fetch(rawUrl).then((r) => r.text()).then(JSON.parse)) as { nodes: unknown[] };
      if (page.nodes.length !== 100) throw new Error('short page');
    };
    const [a, b] = (await interleave([sdk, raw])) as [number[], number[]];
    const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
    const ratio = median(a) / median(b);
    const ok = ratio <= TARGET;
    return {
      name,
      ok,
      lines: [
        `${ROUNDS} interleaved rounds after ${WARMUP} warm-up; page of 100 nodes, ${(Buffer.byteLength(body) / 1024).toFixed(1)} KB of JSON; server in a worker thread`,
        `${'median per call'.padEnd(46)}  ${'µs'.padStart(7)}`,
        `${'SDK  registry.searchNodes({ limit: 100 })'.padEnd(46)}  ${us(median(a)).padStart(7)}`,
        `${'raw  fetch(url) → text() → JSON.parse'.padEnd(46)}  ${us(median(b)).padStart(7)}`,
        `ratio ${ratio.toFixed(3)}× (SDK − raw = ${us(median(a) - median(b))}), target ≤ ${TARGET.toFixed(2)}×: ${ok ? 'PASS' : 'FAIL'}`,
      ],
    };
  } finally {
    await server.stop();
  }
}
