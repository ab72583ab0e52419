// CloudPool over Comfy API v2 servers (issue 33, "Pool and queue"): v2 emulators over real loopback
// sockets, alone and beside a v1 local one. Jobs spread by load (a v2 server has no queue to read and,
// without `objectInfo`, no nodes: placed by load), files downloadable through the client of the server
// that made them, inputs uploaded once per server and content (and content-addressed on the server: a
// new pool sends 0 bytes of a known file), a server going down (its jobs move, never two jobs for one
// run: counted on the servers), a lost submit answer (one job), and editor files (refused on a v2 server
// without `objectInfo`, run with it).
import { afterEach, describe, expect, it } from 'vitest';
import { CloudPool, NotFoundError, PlacementError, ServerLostError, type PoolJobResult, type PoolServer } from '../../../src/index.ts';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { blake3Of } from '../../../src/emulator/v2/blake3.ts';
import { until } from '../../helpers/emulator-runs.ts';

type Wf = Record<string, { class_type: string; inputs: Record<string, unknown> }>;
/** LoadImage → ImageInvert → SaveImage with a unique prefix (the engine caches identical workflows). */
const wf = (prefix: string, image = 'in.png'): Wf => ({
  '1': { class_type: 'LoadImage', inputs: { image } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

/** LoadImage → ImageBlur → SaveImage as the editor saves it (schema 0.4). */
const editorFile = (prefix: string) => ({
  version: 0.4,
  last_node_id: 3,
  last_link_id: 2,
  nodes: [
    { id: 1, type: 'LoadImage', pos: [0, 0], size: [300, 300], flags: {}, order: 0, mode: 0, inputs: [], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }, { name: 'MASK', type: 'MASK', links: null }], properties: {}, widgets_values: ['in.png', 'image'] },
    { id: 2, type: 'ImageBlur', pos: [320, 0], size: [300, 100], flags: {}, order: 1, mode: 0, inputs: [{ name: 'image', type: 'IMAGE', link: 1 }], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [2] }], properties: {}, widgets_values: [2, 1] },
    { id: 3, type: 'SaveImage', pos: [640, 0], size: [300, 300], flags: {}, order: 2, mode: 0, inputs: [{ name: 'images', type: 'IMAGE', link: 2 }], outputs: [], properties: {}, widgets_values: [prefix] },
  ],
  links: [
    [1, 1, 0, 2, 0, 'IMAGE'],
    [2, 2, 0, 3, 0, 'IMAGE'],
  ],
  groups: [],
  config: {},
  extra: {},
});

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function emulator(personality: 'v2' | 'v2-real' | 'local' = 'v2', o: { stepMs?: number; port?: number } = {}): Promise<Emulator> {
  const emu = await startEmulator({ port: o.port ?? 0, personality, logLevel: 'off', cloud: { stepMs: o.stepMs ?? 5, progressSteps: 2 } });
  open.push(emu);
  emu.cloud.addFile('in.png', makePng(8, 8, 1));
  return emu;
}
const v2Server = (emu: Emulator, id: string, more: Partial<PoolServer> = {}): PoolServer => ({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY, server: 'v2', id, retry: { limit: 0 }, logLevel: 'off', ...more }) as PoolServer;
const v1Server = (emu: Emulator, id: string): PoolServer => ({ baseUrl: emu.url, id, retry: { limit: 0 }, logLevel: 'off' }) as PoolServer;
function pool(servers: PoolServer[], options: ConstructorParameters<typeof CloudPool>[1] = {}): CloudPool {
  const p = new CloudPool(servers, { logLevel: 'off', ...options });
  open.push(p);
  return p;
}
const allUp = (p: CloudPool) => until(() => p.servers.every((s) => s.state === 'up'), 5000, 'every server up');
/** The v2 jobs an emulator made whose SaveImage prefix is `prefix`. */
const v2JobsOf = (emu: Emulator, prefix: string) => [...emu.v2!.jobs.values()].filter((j) => (j.submitted['3'] as { inputs?: { filename_prefix?: unknown } } | undefined)?.inputs?.filename_prefix === prefix);
const countBy = (results: readonly PoolJobResult[]) => {
  const out: Record<string, number> = {};
  for (const r of results) out[r.server] = (out[r.server] ?? 0) + 1;
  return out;
};
const outcome = <T>(p: PromiseLike<T>): Promise<T | Error> => Promise.resolve(p).then((v) => v, (e: unknown) => e as Error);
const bytesOf = async (b: unknown): Promise<Uint8Array> => (b instanceof Uint8Array ? b : b instanceof Blob ? new Uint8Array(await b.arrayBuffer()) : new Uint8Array(await (b as Response).arrayBuffer()));

describe('a pool of v2 servers', () => {
  it('spreads jobs by load over two v2 servers (nodes unknown); each ran once where its result says; files download through that server’s client', async () => {
    const emus = [await emulator('v2', { stepMs: 20 }), await emulator('v2', { stepMs: 20 })];
    const p = pool([v2Server(emus[0]!, 'a'), v2Server(emus[1]!, 'b')]);
    await allUp(p);
    // In one tick: ties go round-robin.
    const first = [0, 1].map((i) => p.submit(wf(`rr-${i}`)));
    expect(first.map((j) => j.server)).toEqual(['a', 'b']);
    const rest = Array.from({ length: 6 }, (_, i) => p.run(wf(`spread-${i}`)));
    const results = await Promise.all([...first.map((j) => j.result), ...rest]);
    const by = countBy(results);
    expect(by.a).toBeGreaterThanOrEqual(2);
    expect(by.b).toBeGreaterThanOrEqual(2);
    for (const [k, r] of results.entries()) {
      const prefix = k < 2 ? `rr-${k}` : `spread-${k - 2}`;
      const on = emus.map((e) => v2JobsOf(e, prefix).length);
      expect(on.reduce((x, y) => x + y), prefix).toBe(1);
      const emu = emus[r.server === 'a' ? 0 : 1]!;
      // `promptId` is the v2 job id.
      expect(v2JobsOf(emu, prefix)[0]!.id).toBe(r.promptId);
      expect(r.files).toHaveLength(1);
      const out = v2JobsOf(emu, prefix)[0]!.outputs[0]!;
      const bytes = await bytesOf(await p.client(r.server)!.download(r.files[0]!));
      expect(bytes.length).toBeGreaterThan(0);
      expect(await blake3Of(bytes)).toBe(out.record!.blob.hash);
    }
    // Every job was one POST that made one job: nothing sent twice.
    expect(emus.map((e) => e.v2!.counters.jobsCreated).reduce((x, y) => x + y)).toBe(8);
    expect(emus.map((e) => e.v2!.counters.jobPosts).reduce((x, y) => x + y)).toBe(8);
    // A file of one server is not another's: the other client does not have it.
    const onA = results.find((r) => r.server === 'a')!;
    expect(await outcome(p.client('b')!.download(onA.files[0]!))).toBeInstanceOf(NotFoundError);
  });

  it('a mixed pool (a v1 local server and a v2 one): both take jobs with inputs; each file downloads through its own server’s client', async () => {
    const local = await emulator('local', { stepMs: 10 });
    const v2 = await emulator('v2', { stepMs: 10 });
    const p = pool([v1Server(local, 'local'), v2Server(v2, 'v2')]);
    await allUp(p);
    const png = makePng(8, 8, 7);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => p.run(wf(`mixed-${i}`, 'placeholder.png'), { inputs: { '1.inputs.image': png } })));
    const by = countBy(results);
    expect(by.local).toBeGreaterThanOrEqual(1);
    expect(by.v2).toBeGreaterThanOrEqual(1);
    for (const r of results) {
      expect(r.files).toHaveLength(1);
      const bytes = await bytesOf(await p.client(r.server)!.download(r.files[0]!));
      expect(bytes.length).toBeGreaterThan(0);
    }
    // On the v2 server the input went as an asset, uploaded once; the workflow named it as core/ASSET.
    expect(v2.v2!.counters.uploads).toBe(1);
    const onV2 = results.filter((r) => r.server === 'v2');
    expect(v2.v2!.counters.jobsCreated).toBe(onV2.length);
    const image = v2.v2!.jobs.get(onV2[0]!.promptId)!.submitted['1'] as { inputs: { image: unknown } };
    expect(image.inputs.image).toMatchObject({ __type: 'core/ASSET' });
    // The local server got the file once too.
    expect(local.requests.filter((r) => r.method === 'POST' && /\/upload\/image$/.test(r.path))).toHaveLength(1);
  });
});

describe('inputs on a v2 server', () => {
  it('upload once per server and content: a second job sends no bytes, a new pool (same server) none either: the server has them by hash', async () => {
    const emu = await emulator('v2');
    const png = makePng(64, 64, 9);
    const p = pool([v2Server(emu, 'a')]);
    await allUp(p);
    const one = await p.run(wf('in-1', 'x.png'), { inputs: { '1.inputs.image': png } });
    const { uploads, uploadBytes } = emu.v2!.counters;
    expect(uploads).toBe(1);
    expect(uploadBytes).toBeGreaterThanOrEqual(png.length);
    const two = await p.run(wf('in-2', 'x.png'), { inputs: { '1.inputs.image': new Blob([new Uint8Array(png)]) } });
    expect(emu.v2!.counters.uploadBytes).toBe(uploadBytes);
    expect(emu.v2!.counters.uploads).toBe(1);
    // Another pool knows nothing of the first's uploads: the client hashes, the server has the bytes (from-hash).
    const q = pool([v2Server(emu, 'a')]);
    await allUp(q);
    const three = await q.run(wf('in-3', 'x.png'), { inputs: { '1.inputs.image': png } });
    expect(emu.v2!.counters.uploadBytes).toBe(uploadBytes);
    // Different content is uploaded.
    await q.run(wf('in-4', 'x.png'), { inputs: { '1.inputs.image': makePng(64, 64, 10) } });
    expect(emu.v2!.counters.uploadBytes).toBeGreaterThan(uploadBytes);
    // The three jobs of the same content named the same asset.
    const assetOf = (id: string) => ((emu.v2!.jobs.get(id)!.submitted['1'] as { inputs: { image: { info: { id: string } } } }).inputs.image.info.id);
    expect(new Set([one, two, three].map((r) => assetOf(r.promptId))).size).toBe(1);
    expect(emu.v2!.counters.jobsCreated).toBe(4);
  });
});

describe('faults', () => {
  it('a lost submit answer on a v2 server of a pool: sent again under the same key, one job, the run resolves', async () => {
    const emu = await emulator('v2');
    const p = pool([v2Server(emu, 'a')]);
    await allUp(p);
    emu.v2!.faults.loseSubmitAnswers = 1;
    const r = await p.run(wf('lost-answer'));
    expect(r.server).toBe('a');
    expect(r.files).toHaveLength(1);
    expect(emu.v2!.counters.jobPosts).toBe(2);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
    expect(v2JobsOf(emu, 'lost-answer').map((j) => j.id)).toEqual([r.promptId]);
  });

  it('the same on v2-real (comfy-api-proxy: labels as strings): one job', async () => {
    const emu = await emulator('v2-real');
    const p = pool([v2Server(emu, 'a')]);
    await allUp(p);
    emu.v2!.faults.loseSubmitAnswers = 1;
    const r = await p.run(wf('lost-answer-real'));
    expect(r.files).toHaveLength(1);
    expect(emu.v2!.counters.jobsCreated).toBe(1);
  });

  // A refused connection (`sent: 'no'`, nothing left) is said at once, so the pool moves the job on.
  it('a v2 server stopped before its jobs reach it: they move to the other, each run one job in all', async () => {
    const emus = [await emulator('v2'), await emulator('v2')];
    const p = pool([v2Server(emus[0]!, 'a'), v2Server(emus[1]!, 'b')], { serverLostAfter: 1000 });
    await allUp(p);
    const downs: string[] = [];
    p.on('serverDown', (e) => downs.push(e.server));
    await emus[1]!.close();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => p.run(wf(`moved-${i}`))));
    expect(results.every((r) => r.server === 'a')).toBe(true);
    expect(downs).toEqual(['b']);
    expect(emus[1]!.v2!.counters.jobsCreated).toBe(0);
    expect(emus[0]!.v2!.counters.jobsCreated).toBe(6);
    for (let i = 0; i < 6; i++) expect(v2JobsOf(emus[0]!, `moved-${i}`)).toHaveLength(1);
  });

  it('a v2 server stopped while it runs jobs: they are not run again elsewhere (ServerLostError); never two jobs for one run', async () => {
    const emus = [await emulator('v2', { stepMs: 40 }), await emulator('v2', { stepMs: 400 })];
    const p = pool([v2Server(emus[0]!, 'a'), v2Server(emus[1]!, 'b')], { serverLostAfter: 1000 });
    await allUp(p);
    const jobs = Array.from({ length: 4 }, (_, i) => p.submit(wf(`lost-${i}`)));
    const onB = jobs.filter((j) => j.server === 'b');
    expect(onB.length).toBeGreaterThan(0);
    await until(() => onB.every((j) => j.promptId !== undefined), 5000, 'b accepted its jobs');
    await emus[1]!.close();
    const outcomes = await Promise.all(jobs.map((j) => outcome(j.result)));
    for (const [i, j] of jobs.entries()) {
      const o = outcomes[i]!;
      if (j.server === 'b') expect(o, String(o)).toBeInstanceOf(ServerLostError);
      else expect(o).toMatchObject({ server: 'a' });
    }
    for (let i = 0; i < 4; i++) expect(v2JobsOf(emus[0]!, `lost-${i}`).length + v2JobsOf(emus[1]!, `lost-${i}`).length).toBe(1);
  });

  it('with resubmitOnServerLoss, a job lost with its v2 server runs once more on the other, saying where it was lost', async () => {
    const emus = [await emulator('v2', { stepMs: 10 }), await emulator('v2', { stepMs: 400 })];
    const p = pool([v2Server(emus[0]!, 'a'), v2Server(emus[1]!, 'b')], { serverLostAfter: 1000, resubmitOnServerLoss: true });
    await allUp(p);
    const jobs = [p.submit(wf('rerun-0')), p.submit(wf('rerun-1'))];
    const onB = jobs.find((j) => j.server === 'b')!;
    await until(() => onB.promptId !== undefined, 5000, 'b accepted its job');
    const lostId = onB.promptId;
    await emus[1]!.close();
    const results = await Promise.all(jobs.map((j) => j.result));
    const rerun = results.find((r) => r.resubmittedFrom)!;
    expect(rerun).toMatchObject({ server: 'a', resubmittedFrom: { server: 'b', promptId: lostId } });
    expect(emus[0]!.v2!.counters.jobsCreated).toBe(2);
  });
});

describe('editor files on v2 servers', () => {
  it('refused on a v2 server without objectInfo: PlacementError saying what to pass, nothing sent', async () => {
    const emu = await emulator('v2');
    const p = pool([v2Server(emu, 'a')]);
    await allUp(p);
    const err = await outcome(p.run(editorFile('ed-refused')));
    expect(err).toBeInstanceOf(PlacementError);
    expect((err as Error).message).toMatch(/objectInfo/);
    expect(emu.v2!.counters.jobPosts).toBe(0);
  });

  it('in a mixed pool it goes to the v1 server, whose object_info converts it', async () => {
    const local = await emulator('local');
    const v2 = await emulator('v2');
    const p = pool([v2Server(v2, 'v2'), v1Server(local, 'local')]);
    await allUp(p);
    const results = await Promise.all([0, 1, 2].map((i) => p.run(editorFile(`ed-mixed-${i}`))));
    expect(results.map((r) => r.server)).toEqual(['local', 'local', 'local']);
    expect(v2.v2!.counters.jobPosts).toBe(0);
  });

  it('runs on a v2 server given objectInfo (the URL of a server serving /api/object_info): converted before sending', async () => {
    const emu = await emulator('v2');
    // The v2 emulator serves GET /api/object_info without a key, as the ComfyUI behind a proxy does.
    const p = pool([v2Server(emu, 'a', { objectInfo: emu.url })]);
    await allUp(p);
    const r = await p.run(editorFile('ed-ok'));
    expect(r.files).toHaveLength(1);
    const submitted = v2JobsOf(emu, 'ed-ok');
    expect(submitted).toHaveLength(1);
    expect(submitted[0]!.submitted['2']).toMatchObject({ class_type: 'ImageBlur', inputs: { blur_radius: 2, sigma: 1 } });
  });

  it('with objectInfo, placement by class: a v2 server whose nodes lack the class gets no job that uses it', async () => {
    const emus = [await emulator('v2'), await emulator('v2')];
    const info = (await (await fetch(`${emus[0]!.url}/api/object_info`)).json()) as Record<string, unknown>;
    const { ImageBlur: _drop, ...noBlur } = info;
    const p = pool([v2Server(emus[0]!, 'a', { objectInfo: noBlur as never }), v2Server(emus[1]!, 'b', { objectInfo: info as never })]);
    await allUp(p);
    const results = await Promise.all([0, 1, 2].map((i) => p.run(editorFile(`ed-class-${i}`))));
    expect(results.map((r) => r.server)).toEqual(['b', 'b', 'b']);
    expect(emus[0]!.v2!.counters.jobPosts).toBe(0);
  });

  it('an API-format workflow runs unvalidated on a v2 server without objectInfo', async () => {
    const emu = await emulator('v2');
    const p = pool([v2Server(emu, 'a')]);
    await allUp(p);
    expect((await p.run(wf('api-ok'))).server).toBe('a');
  });
});
