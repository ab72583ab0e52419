// listJobs() parameters against the emulator's cloud and local servers (issue 24, item 6): what the
// SDK refuses, each server would have answered with 400, and the refusal sends nothing; what it
// takes, the server takes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient, InvalidArgumentError, type ListJobsParams } from '../../src/index.ts';
import { EMULATOR_API_KEY, startEmulator, type Emulator } from '../../src/emulator/index.ts';

const servers: Record<'cloud' | 'local', { emu?: Emulator; client?: CloudClient }> = { cloud: {}, local: {} };

beforeAll(async () => {
  for (const kind of ['cloud', 'local'] as const) {
    const emu = await startEmulator({ personality: kind });
    servers[kind] = { emu, client: new CloudClient({ baseUrl: emu.url, ...(kind === 'cloud' ? { apiKey: EMULATOR_API_KEY } : {}), server: kind }) };
  }
});
afterAll(async () => {
  for (const { emu } of Object.values(servers)) await emu?.close();
});

/** What the server answers to `query` sent as it is, by hand. */
const statusOf = async (kind: 'cloud' | 'local', query: string) =>
  (await fetch(`${servers[kind].emu!.url}/api/jobs?${query}`, { headers: kind === 'cloud' ? { 'X-API-Key': EMULATOR_API_KEY } : {} })).status;

describe.each([
  ['cloud', { status: 'done' }, 'status=done'],
  ['cloud', { status: ['failed', 'canceled'] }, 'status=failed,canceled'],
  ['cloud', { sort_by: 'created_at' }, 'sort_by=created_at'],
  ['cloud', { limit: 1001 }, 'limit=1001'],
  ['cloud', { offset: -1 }, 'offset=-1'],
  ['cloud', { output_type: 'images' }, 'output_type=images'],
  ['local', { status: 'cancelled' }, 'status=cancelled'],
  ['local', { sort_by: 'execution_time' }, 'sort_by=execution_time'],
  ['local', { sort_order: 'up' }, 'sort_order=up'],
  ['local', { limit: 0 }, 'limit=0'],
] as const)('%s: %o', (kind, params, query) => {
  it('is refused before any request, as the server would refuse it', async () => {
    const { emu, client } = servers[kind];
    emu!.requests.length = 0;
    const err = await client!.listJobs(params as unknown as ListJobsParams).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).message).toMatch(/^params\.\w+(\.\d)?: must be /);
    expect(emu!.requests).toEqual([]);
    expect(await statusOf(kind, query)).toBe(400);
  });
});

const documented: Array<['cloud' | 'local', ListJobsParams]> = [
  ['cloud', { status: ['failed', 'cancelled'], sort_by: 'execution_time', sort_order: 'asc', output_type: 'video', limit: 1000, offset: 0 }],
  ['local', { status: ['pending', 'in_progress', 'completed', 'failed'], sort_by: 'execution_duration', sort_order: 'desc', limit: 1, workflow_id: 'w' }],
];
describe.each(documented)('%s', (kind, params) => {
  it('takes every value it documents', async () => {
    const page = await servers[kind].client!.listJobs(params);
    expect(page.jobs).toEqual([]);
  });
});
