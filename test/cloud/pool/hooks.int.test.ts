// CloudPool's onPlaced hook (issue 26: the queue records where a job goes before it can exist there): awaited at
// placement, before the upload and the POST; a hook that throws stops the job before anything is sent. And
// beforeSubmit (issue 31: the queue checks its lock again): awaited after the uploads, immediately before the POST.
import { afterEach, expect, it } from 'vitest';
import { CloudPool, InvalidArgumentError } from '../../../src/index.ts';
import { makePng, startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { invertWorkflow } from '../../helpers/emulator-runs.ts';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
const posts = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST').length;
const prompts = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST' && /\/prompt$/.test(r.path)).length;
const uploads = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST' && /\/upload\//.test(r.path)).length;

async function setup() {
  const emu = await startEmulator({ personality: 'local', cloud: { stepMs: 5 } });
  open.push(emu);
  emu.cloud.addFile('in.png', makePng(8, 8, 1));
  const pool = new CloudPool([{ baseUrl: emu.url, id: 'a', logLevel: 'off' }], { logLevel: 'off', startWindow: 0 });
  open.push(pool);
  return { emu, pool };
}

it('awaits onPlaced with the server before any upload or submission', async () => {
  const { emu, pool } = await setup();
  const seen: Array<{ id: string; baseUrl: string; postsBefore: number }> = [];
  const r = await pool.run(invertWorkflow('x.png', 'placed'), {
    promptId: '3f1b2c4d-0000-4000-8000-000000000001',
    inputs: { '1.inputs.image': makePng(4, 4, 2) },
    onPlaced: async (s) => {
      await new Promise((res) => setTimeout(res, 20));
      seen.push({ ...s, postsBefore: posts(emu) });
    },
  });
  expect(seen).toEqual([{ id: 'a', baseUrl: `${emu.url}/`, postsBefore: 0 }]);
  expect(r.promptId).toBe('3f1b2c4d-0000-4000-8000-000000000001');
});

it('a hook that throws rejects the run with its error, and nothing is sent', async () => {
  const { emu, pool } = await setup();
  const boom = new Error('redis is down');
  await expect(pool.run(invertWorkflow('in.png', 'never'), { onPlaced: () => Promise.reject(boom) })).rejects.toBe(boom);
  expect(posts(emu)).toBe(0);
});

it('refuses an onPlaced that is not a function, before anything is queued', async () => {
  const { pool } = await setup();
  expect(() => pool.submit(invertWorkflow('in.png', 'bad'), { onPlaced: 'no' as never })).toThrow(InvalidArgumentError);
});

it('awaits beforeSubmit with the job id after the uploads, immediately before the submission', async () => {
  const { emu, pool } = await setup();
  const seen: Array<{ id: string; uploads: number; prompts: number }> = [];
  const r = await pool.run(invertWorkflow('x.png', 'before-submit'), {
    promptId: '3f1b2c4d-0000-4000-8000-000000000031',
    inputs: { '1.inputs.image': makePng(4, 4, 31) },
    beforeSubmit: async (id) => {
      await new Promise((res) => setTimeout(res, 20));
      seen.push({ id, uploads: uploads(emu), prompts: prompts(emu) });
    },
  });
  expect(seen).toEqual([{ id: '3f1b2c4d-0000-4000-8000-000000000031', uploads: 1, prompts: 0 }]);
  expect(r.promptId).toBe('3f1b2c4d-0000-4000-8000-000000000031');
  expect(prompts(emu)).toBe(1);
});

it('a beforeSubmit that throws rejects the run with its error once the inputs are up: the submission is not sent, nor moved', async () => {
  const { emu, pool } = await setup();
  const lost = new Error('lock lost');
  await expect(pool.run(invertWorkflow('x.png', 'refused'), { inputs: { '1.inputs.image': makePng(4, 4, 32) }, beforeSubmit: () => Promise.reject(lost) })).rejects.toBe(lost);
  expect(uploads(emu)).toBe(1);
  expect(prompts(emu)).toBe(0);
});

it('refuses a beforeSubmit that is not a function, before any request', async () => {
  const { emu, pool } = await setup();
  const before = emu.requests.length;
  expect(() => pool.submit(invertWorkflow('in.png', 'bad'), { beforeSubmit: 'no' as never })).toThrow(InvalidArgumentError);
  const client = pool.client('a')!;
  await expect(client.run(invertWorkflow('in.png', 'bad'), { beforeSubmit: 1 as never })).rejects.toBeInstanceOf(InvalidArgumentError);
  await expect(client.submit(invertWorkflow('in.png', 'bad'), { beforeSubmit: {} as never })).rejects.toBeInstanceOf(InvalidArgumentError);
  expect(emu.requests.slice(before).filter((r) => r.method === 'POST')).toEqual([]);
});
