// The job follower over real loopback sockets, against the emulator: a socket cut mid-job and
// refused afterwards (the ending is found by polling at a short gap, whatever pollInterval
// says), and the job's id as the server ran it. The states one by one: test/cloud/follow/follower.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient } from '../../../src/index.ts';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { recorder } from '../../helpers/log-recorder.ts';
import { invertWorkflow as workflow } from '../../helpers/emulator-runs.ts';

let cloud: Emulator;
let local: Emulator;
const clients: CloudClient[] = [];
beforeAll(async () => {
  cloud = await startEmulator({ personality: 'cloud', cloud: { stepMs: 30, progressSteps: 4 }, apiKeys: { [EMULATOR_API_KEY]: { parallel: 4 } } });
  local = await startEmulator({ personality: 'local', cloud: { stepMs: 5, progressSteps: 2 } });
  cloud.cloud.addFile('in.png', makePng(8, 8, 1));
  local.cloud.addFile('in.png', makePng(8, 8, 2));
});
afterAll(async () => {
  await cloud.close();
  await local.close();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  cloud.cloud.resetSocketFaults();
});

describe('run() with its socket cut mid-job and refused from then on', () => {
  it('finds the ending by polling at a short gap, not once per pollInterval, with every file', async () => {
    const rec = recorder();
    const c = new CloudClient({ baseUrl: cloud.url, apiKey: EMULATOR_API_KEY, logLevel: 'debug', logger: rec.logger });
    clients.push(c);
    // Its next attempt a minute away: only polling can find the ending.
    c.connect({ reconnect: { baseDelay: 60_000, maxDelay: 60_000 } });
    const result = await c.run(workflow('in.png', 'cut'), {
      pollInterval: 60_000,
      onSubmitted: () => {
        cloud.cloud.rejectSocketUpgrades(1000);
        cloud.cloud.dropAllSockets();
      },
    });
    expect(result.files).toHaveLength(1);
    expect(rec.index(new RegExp(`job ${result.promptId}: the socket is reconnecting; polling the status every 25 ms`))).toBeGreaterThan(-1);
    // The drop is debug news (the socket's failed attempt aside): nothing at error.
    expect(rec.of('error')).toEqual([]);
  });
});

describe('the job id', () => {
  it('is the id the server ran the job under, from onSubmitted to the result, whether or not it honours the one chosen', async () => {
    const c = new CloudClient({ baseUrl: local.url, logLevel: 'off' });
    clients.push(c);
    const submitted: string[] = [];
    const result = await c.run(workflow('in.png', 'chosen'), { promptId: 'a0c9e8a4-5f0e-4d0e-9a57-3b0b8f2d1c11', onSubmitted: (id) => void submitted.push(id) });
    expect(submitted).toEqual([result.promptId]);
    expect(local.cloud.engine.jobs.get(result.promptId)?.status).toBe('completed');
    expect(result.files).toHaveLength(1);
  });
});
