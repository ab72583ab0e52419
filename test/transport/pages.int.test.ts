// Walking offset pages while the list changes under them (issue 23, item 9):
// listJobs() against the emulator's cloud, with jobs submitted between pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient } from '../../src/index.ts';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { invertWorkflow } from '../helpers/emulator-runs.ts';

let emu: Emulator;
let cloud: CloudClient;
let n = 0;
const submit = async () => (await cloud.submit(invertWorkflow('in.png', `page_${++n}`))).prompt_id;

beforeAll(async () => {
  emu = await startEmulator({ personality: 'cloud', cloud: { stepMs: 5 } });
  emu.cloud.addFile('in.png', makePng(2, 2, 1));
  cloud = new CloudClient({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY, server: 'cloud' });
});
afterAll(() => emu.close());

describe('listJobs() iteration', () => {
  it('yields each job once when new jobs arrive between pages (newest first: every page shifts)', async () => {
    const before: string[] = [];
    for (let i = 0; i < 7; i++) before.push(await submit());
    const yielded: string[] = [];
    const added: string[] = [];
    for await (const job of cloud.listJobs({ limit: 3 })) {
      yielded.push(job.id);
      // At each page's end, before the loop asks for the next page: one new job, then a whole page of them.
      if (yielded.length === 3) added.push(await submit());
      if (yielded.length === 5) for (let i = 0; i < 3; i++) added.push(await submit());
    }
    expect(new Set(yielded).size).toBe(yielded.length);
    for (const id of before) expect(yielded).toContain(id);
    expect(yielded.length).toBeLessThanOrEqual(before.length + added.length);
  });
});
