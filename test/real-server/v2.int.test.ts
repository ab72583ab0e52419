// CloudClient with server: 'v2' against a REAL Comfy API v2 server (comfy-api-proxy in front of ComfyUI 0.8.0),
// named by PLATFORMUI_V2_URL (`url=$(../shared/real-server/v2/start.sh)`; .ci/run starts one); without the
// variable this file skips with one line. The ComfyUI behind it (its /api/v2/health `upstream`, or
// PLATFORMUI_V2_COMFY_URL) serves the same workflows through v1 (`server: 'local'`) and the object_info the
// editor's format needs.
//
// One ComfyUI runs one job at a time, and the tests here are sequential (vitest runs a file's tests in order), so
// a "long" job is long only because of its own nodes: a chain of ImageBlur with a sigma of its own (ComfyUI would
// serve seen inputs from its cache). No assertion is timed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient, JobCancelledError, JobExpiredError, UnsupportedError, type CloudClientOptions, type JobResult, type WorkflowJSON } from '../../src/index.ts';
import type { V2UploadResponse } from '../../src/cloud/v2/backend.ts';
import { comfyBehind, decodePng, invertWorkflow, longWorkflow, noisePng, startV2Relay, tinyWorkflow, type V2Relay } from './v2-helpers.ts';

const url = process.env.PLATFORMUI_V2_URL;
const EDITOR = fileURLToPath(new URL('../fixtures/editor/real/', import.meta.url));

if (!url) it('a real Comfy API v2 server: skipped', ({ skip }) => skip('set PLATFORMUI_V2_URL to a running v2 server (e.g. the URL ../shared/real-server/v2/start.sh prints)'));
describe.skipIf(!url)('CloudClient on a real Comfy API v2 server (comfy-api-proxy + ComfyUI)', () => {
  let comfy: string;
  let dir: string;
  const clients: CloudClient[] = [];
  const relays: V2Relay[] = [];
  const v2 = (options: Omit<CloudClientOptions, 'server'> = {}) => {
    const c = new CloudClient({ baseUrl: url!, logLevel: 'off', ...options, server: 'v2' });
    clients.push(c);
    return c;
  };
  const relay = async () => {
    const r = await startV2Relay(url!);
    relays.push(r);
    return r;
  };
  /** The server's own list of jobs (the newest 100, full jobs). */
  const serverJobs = async () => ((await (await fetch(`${url}/api/v2/jobs?limit=100`)).json()) as { jobs: { id: string; status: string; metadata?: unknown }[] }).jobs;
  const serverJob = async (id: string) => (await (await fetch(`${url}/api/v2/jobs/${id}`)).json()) as { id: string; status: string; outputs: unknown[] };
  const bytesOf = async (c: CloudClient, result: JobResult, i = 0) => new Uint8Array(await (await c.download(result.files[i]!)).arrayBuffer());
  /** Until `id` reads `status` on the server (polled every 100 ms; the test's own timeout bounds it). */
  const until = async (id: string, status: string[]) => {
    for (;;) {
      const job = await serverJob(id);
      if (status.includes(job.status)) return job;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    comfy = await comfyBehind(url!);
    dir = mkdtempSync(join(tmpdir(), 'v2-real-'));
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(relays.map((r) => r.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('run() end to end: an uploaded PNG inverted, its bytes read back, pixels equal to the input inverted and to the same workflow run through v1 on the ComfyUI behind it', { timeout: 60_000 }, async () => {
    const c = v2();
    expect(c.server).toBe('v2');
    const { png, pixels } = noisePng(64, 48);
    const result = await c.run(invertWorkflow(`v2_invert_${Date.now()}`), { inputs: { '1.inputs.image': png } });
    expect(result.status).toBe('completed');
    expect(result.files).toHaveLength(1);
    expect(result.files[0]).toMatchObject({ nodeId: '3', type: 'output' });
    const out = decodePng(await bytesOf(c, result));
    expect([out.width, out.height, out.channels]).toEqual([64, 48, 3]);
    // ImageInvert as ComfyUI computes it: in float32 (v / 255, 1 - x, × 255), truncated back to 8 bits.
    const f = Math.fround;
    const inverted = Buffer.from(pixels.map((v) => Math.trunc(Math.min(255, Math.max(0, f(f(1 - f(v / 255)) * 255))))));
    expect(out.pixels.equals(inverted)).toBe(true);
    // The server's record says the same.
    expect((await serverJob(result.promptId)).status).toBe('succeeded');

    // The same workflow and input through v1 on the ComfyUI behind the proxy: the same pixels.
    const local = new CloudClient({ baseUrl: comfy, server: 'local', logLevel: 'off' });
    clients.push(local);
    const v1 = await local.run(invertWorkflow(`v1_invert_${Date.now()}`), { inputs: { '1.inputs.image': png } });
    const v1Out = decodePng(new Uint8Array(await (await local.download(v1.files[0]!)).arrayBuffer()));
    expect(v1Out.pixels.equals(out.pixels)).toBe(true);
  });

  it('the same input twice uploads once: run(wf, { inputs }) twice, the second sends 0 bytes of the file (counted on the wire); uploadImage() then says bytesSent 0', { timeout: 90_000 }, async () => {
    const r = await relay();
    const c = v2({ baseUrl: r.url });
    const { png } = noisePng(320, 320); // ~300 KB, incompressible
    const file = join(dir, `same-${Date.now()}.png`);
    writeFileSync(file, png);
    r.take();
    const first = await c.run(invertWorkflow(`v2_same_a_${Date.now()}`), { inputs: { '1.inputs.image': file } });
    const wire1 = r.take();
    const second = await c.run(invertWorkflow(`v2_same_b_${Date.now()}`), { inputs: { '1.inputs.image': file } });
    const wire2 = r.take();
    expect(wire1).toBeGreaterThan(png.byteLength);
    // HEAD by-hash, from-hash, the submission and the polls: headers and JSON, none of the file.
    expect(wire2).toBeLessThan(16_384);
    expect(first.files).toHaveLength(1);
    expect(second.files).toHaveLength(1);
    // On v2 the answer carries the asset, its reference and the bytes sent (uploadImage()'s declared type does not say so).
    const again = (await c.uploadImage(file)) as V2UploadResponse;
    expect(again.bytesSent).toBe(0);
    expect(again.reference).toMatchObject({ __type: 'core/ASSET' });
  });

  it('stopJob() of a running job while run() follows it: run() rejects JobCancelledError, the server says canceled, nothing was saved', { timeout: 90_000 }, async () => {
    const c = v2();
    let id: string | undefined;
    const running = c.run(longWorkflow(12, `v2_cancel_run_${Date.now()}`), { onSubmitted: (promptId) => void (id = promptId) });
    const outcome = running.then(
      () => undefined,
      (err: unknown) => err,
    );
    while (!id) await new Promise((r) => setTimeout(r, 20));
    await until(id, ['running']);
    await c.stopJob(id);
    const err = await outcome;
    expect(err).toBeInstanceOf(JobCancelledError);
    expect((err as JobCancelledError).promptId).toBe(id);
    const job = await serverJob(id);
    expect(job.status).toBe('canceled');
    expect(job.outputs).toEqual([]);
  });

  it('stopJob() of a job queued behind a running one: it ends canceled or expired and never runs; its run() rejects', { timeout: 90_000 }, async () => {
    const c = v2();
    let a: string | undefined;
    let b: string | undefined;
    const settle = (p: Promise<unknown>) => p.then(() => undefined, (err: unknown) => err);
    const runA = settle(c.run(longWorkflow(12, `v2_cancel_a_${Date.now()}`), { onSubmitted: (id) => void (a = id) }));
    while (!a) await new Promise((r) => setTimeout(r, 20));
    await until(a, ['running']);
    const runB = settle(c.run(longWorkflow(12, `v2_cancel_b_${Date.now()}`), { onSubmitted: (id) => void (b = id) }));
    while (!b) await new Promise((r) => setTimeout(r, 20));
    await until(b, ['queued']);
    await c.stopJob(b);
    const errB = await runB;
    expect(errB instanceof JobCancelledError || errB instanceof JobExpiredError, String(errB)).toBe(true);
    const jobB = await serverJob(b);
    expect(['canceled', 'expired']).toContain(jobB.status);
    expect(jobB.outputs).toEqual([]);
    // A is still the one running: B never started.
    expect((await serverJob(a)).status).toBe('running');
    await c.stopJob(a);
    expect(await runA).toBeInstanceOf(JobCancelledError);
    // ComfyUI never ran B: it has no history of it.
    expect(await (await fetch(`${comfy}/history/${b}`)).json()).toEqual({});
  });

  it('a lost submit answer (the relay cuts the 201 after the server made the job): exactly one job on the server, and run() still resolves', { timeout: 60_000 }, async () => {
    const r = await relay();
    const c = v2({ baseUrl: r.url });
    // One run first: the client learns how this server takes the key's label (a string), so the lost answer is
    // the one that made the job, not a refusal of the label.
    await c.run(tinyWorkflow(`v2_lost_warm_${Date.now()}`));
    const before = new Set((await serverJobs()).map((j) => j.id));
    r.loseSubmitAnswers(1);
    const key = crypto.randomUUID();
    const result = await c.run(tinyWorkflow(`v2_lost_${Date.now()}`), { promptId: key });
    expect(r.lost).toBe(1);
    // Every job made since, that carries the submission's key (its label): one, the run's. (Filtered by the key,
    // not only counted, so another file's jobs on the same server cannot make or hide a second.)
    const created = (await serverJobs()).filter((j) => !before.has(j.id) && JSON.stringify(j.metadata ?? null).includes(key));
    expect(created.map((j) => j.id)).toEqual([result.promptId]);
    expect(created[0]!.status).toBe('succeeded');
    expect(result.files).toHaveLength(1);
    expect([...(await bytesOf(c, result)).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it('nine concurrent run()s (the server allows 8 event streams) all resolve, each with its own file', { timeout: 90_000 }, async () => {
    const c = v2();
    const stamp = Date.now();
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => c.run(tinyWorkflow(`v2_nine_${stamp}_${i}`, (stamp * 9 + i) % 0xffffff))));
    expect(new Set(results.map((r) => r.promptId)).size).toBe(9);
    for (const [i, r] of results.entries()) {
      expect(r.files).toHaveLength(1);
      expect(r.files[0]!.filename.startsWith(`v2_nine_${stamp}_${i}`)).toBe(true);
    }
    for (const r of results) expect((await serverJob(r.promptId)).status).toBe('succeeded');
  });

  it("an editor file runs, converted with the ComfyUI's object_info (objectInfo: its URL), to the pixels of its API-format twin run through v1", { timeout: 60_000 }, async () => {
    const c = v2({ objectInfo: comfy });
    const editor = JSON.parse(readFileSync(`${EDITOR}twin-subgraph.editor.json`, 'utf8')) as { nodes: unknown[]; links: unknown[] };
    const twin = JSON.parse(readFileSync(`${EDITOR}twin-subgraph.api.json`, 'utf8')) as WorkflowJSON;
    expect(await c.validateWorkflow(editor)).toEqual([]);
    const saved = await c.run(editor);
    expect(saved.files.length).toBeGreaterThan(0);
    const local = new CloudClient({ baseUrl: comfy, server: 'local', logLevel: 'off' });
    clients.push(local);
    // ComfyUI keeps the last prompt's nodes: an unrelated prompt between makes the twin's run save afresh.
    await local.run(tinyWorkflow(`v2_evict_${Date.now()}`));
    const handWritten = await local.run(twin);
    expect(saved.files.map((f) => f.filename.replace(/_\d+_\.png$/, ''))).toEqual(handWritten.files.map((f) => f.filename.replace(/_\d+_\.png$/, '')));
    for (const [i, f] of saved.files.entries()) {
      expect(f.filename).not.toBe(handWritten.files[i]!.filename);
      const mine = decodePng(await bytesOf(c, saved, i));
      const theirs = decodePng(new Uint8Array(await (await local.download(handWritten.files[i]!)).arrayBuffer()));
      expect([mine.width, mine.height]).toEqual([theirs.width, theirs.height]);
      expect(mine.pixels.equals(theirs.pixels)).toBe(true);
    }
  });

  it('getQueue(), interrupt() and connect() throw UnsupportedError before any request', async () => {
    const r = await relay();
    const c = v2({ baseUrl: r.url });
    r.take();
    r.takeConnections();
    await expect(c.getQueue()).rejects.toBeInstanceOf(UnsupportedError);
    await expect(c.interrupt()).rejects.toBeInstanceOf(UnsupportedError);
    expect(() => c.connect()).toThrow(UnsupportedError);
    const err = await c.getQueue().catch((e: unknown) => e);
    expect(err).toMatchObject({ server: 'v2', method: 'getQueue()' });
    expect(r.takeConnections()).toBe(0);
    expect(r.take()).toBe(0);
  });
});
