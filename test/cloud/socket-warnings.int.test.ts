// What the socket says about a failed connection while run() is under way (issue 24, item 9),
// over real loopback sockets: a run whose submission fails for the reason its socket did (a
// wrong key, a closed port) rejects and warns nothing (its error says it); a socket dropped
// mid-run and really retried warns once that it retries while the run goes on, and the run completes.
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { APIConnectionError, AuthenticationError, CloudClient } from '../../src/index.ts';
import { EMULATOR_API_KEY, makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { recorder } from '../helpers/log-recorder.ts';
import { invertWorkflow } from '../helpers/emulator-runs.ts';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ personality: 'cloud', cloud: { stepMs: 10 } });
  emu.cloud.addFile('in.png', makePng(2, 2, 1));
});
afterAll(() => emu.close());
afterEach(() => emu.cloud.resetSocketFaults());

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A client logging at debug into a recorder: what the default level shows is its warn and error lines. */
function client(baseUrl: string, apiKey: string) {
  const rec = recorder();
  const cloud = new CloudClient({ baseUrl, apiKey, server: 'cloud', logLevel: 'debug', logger: rec.logger, retry: { limit: 0 } });
  const shown = () => rec.lines.filter((l) => l.level === 'warn' || l.level === 'error');
  return { cloud, rec, shown };
}

describe('run() whose submission fails for the reason its socket could not connect', () => {
  it.each([
    ['a wrong key', async () => emu.url, 'wrong-key', AuthenticationError],
    ['a closed port', async () => `http://127.0.0.1:${await closedPort()}`, EMULATOR_API_KEY, APIConnectionError],
  ] as const)('%s: rejects with its error and warns nothing (the socket is closed before any retry)', async (_, url, key, errorClass) => {
    const { cloud, rec, shown } = client(await url(), key);
    await expect(cloud.run(invertWorkflow('in.png', 'warn-none'))).rejects.toBeInstanceOf(errorClass);
    const messages = rec.lines.map((l) => l.message);
    // The socket did fail and scheduled a retry, then closed with the run: no retry, so nothing to warn about, ever.
    expect(messages).toContainEqual(expect.stringMatching(/^\[platformui\] socket reconnecting in \d+ ms \(attempt 1\): the connection or the upgrade failed$/));
    expect(messages).toContain('[platformui] socket closed: closed by client');
    expect(shown()).toEqual([]);
  });
});

describe('a socket dropped mid-run whose reconnect fails', () => {
  it('warns once, as it retries, that the run goes on by polling; the run completes', async () => {
    const { cloud, shown } = client(emu.url, EMULATOR_API_KEY);
    const socket = cloud.connect({ reconnect: { baseDelay: 2, maxDelay: 4 } });
    await socket.ready();
    const result = await cloud.run(invertWorkflow('in.png', 'warn-retry'), {
      pollInterval: 20,
      // The run waits for this: the drop, the failed reconnect and the retry that succeeds all happen while it is in flight.
      onSubmitted: async () => {
        emu.cloud.rejectSocketUpgrades(1, 503);
        const back = socket.once('reconnected');
        emu.cloud.dropAllSockets();
        await back;
      },
    });
    expect(result.status).toBe('completed');
    expect(shown()).toEqual([
      {
        level: 'warn',
        message: `[platformui] socket could not connect to ${socket.url}: the connection or the upgrade failed; retrying, and runs in flight go on by polling meanwhile`,
        details: { url: socket.url, reason: 'the connection or the upgrade failed', jobs: 1 },
      },
    ]);
    cloud.close();
  });
});
