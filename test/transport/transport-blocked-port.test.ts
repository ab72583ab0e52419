// A port fetch blocks (1, 6000, …: the "bad port" list of the fetch standard) is refused by fetch
// itself, before any connection: every attempt would be refused alike, and "fetch failed" says
// nothing of why. Real fetch, no server: nothing is ever sent.
import { describe, expect, it } from 'vitest';
import { APIConnectionError, CloudClient, RegistryClient } from '../../src/index.ts';
import { recorder } from '../helpers/log-recorder.ts';

describe('a port fetch blocks', () => {
  it('is not retried, and the error says why (bad port)', async () => {
    const log = recorder();
    const cloud = new CloudClient({ baseUrl: 'http://127.0.0.1:6000', apiKey: 'k', server: 'cloud', logLevel: 'debug', logger: log.logger });
    const err = await cloud.getQueue().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect((err as Error).message).toMatch(/^Connection failed \(bad port\): GET http:\/\/127\.0\.0\.1:6000\/api\/queue$/);
    expect(err).toMatchObject({ sent: 'no' });
    // One attempt, no "retrying" warning.
    expect(log.of('warn')).toEqual([]);
    expect(log.lines.filter((l) => / → /.test(l.message))).toHaveLength(1);
    const registry = new RegistryClient({ baseUrl: 'http://127.0.0.1:6000', logLevel: 'off' });
    await expect(registry.listPublishers()).rejects.toThrow(/bad port/);
  });
});
