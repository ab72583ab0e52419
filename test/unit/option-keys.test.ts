// Unknown options are refused before any request, naming the closest option (issue 32, item 5): in
// plain JavaScript a misspelt option was ignored in silence (`apikey` then a bare 401, `baseURL` then
// "baseUrl is required"). Constructors here; run() against the emulator in test/integration/cloud.test.ts.
import { describe, expect, it } from 'vitest';
import { CloudClient, CloudPool, InvalidArgumentError, ProxyClient, RegistryClient } from '../../src/index.ts';
import { startEmulator } from '../../src/emulator/index.ts';
import { interceptHttp } from './msw.ts';

const { seen } = interceptHttp();

const thrown = (f: () => unknown): InvalidArgumentError => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return err as InvalidArgumentError;
  }
  throw new Error('did not throw');
};

describe('unknown options (issue 32)', () => {
  it.each([
    ['CloudClient apikey', () => new CloudClient({ baseUrl: 'https://cloud.test', apikey: 'k' } as object), 'apikey', 'apiKey'],
    ['CloudClient baseURL', () => new CloudClient({ baseURL: 'https://cloud.test' } as object), 'baseURL', 'baseUrl'],
    ['RegistryClient tokn', () => new RegistryClient({ tokn: 't' } as object), 'tokn', 'token'],
    ['ProxyClient vender', () => new ProxyClient({ baseUrl: 'https://proxy.test', vender: 'x' } as object), 'vender', 'vendor'],
    ['a nested retry option', () => new RegistryClient({ baseUrl: 'https://r.test', retry: { limt: 1 } } as object), 'retry.limt', 'limit'],
    ['CloudPool maxConcurent', () => new CloudPool([{ baseUrl: 'http://127.0.0.1:1', maxConcurent: 1 } as object]), 'maxConcurent', 'maxConcurrent'],
    ['CloudPool options', () => new CloudPool([{ baseUrl: 'http://127.0.0.1:1' }], { logLevl: 'off' } as object), 'logLevl', 'logLevel'],
  ])('%s: InvalidArgumentError naming the closest option, before any request', (_, make, field, near) => {
    const err = thrown(make);
    expect(err.field).toBe(field);
    expect(err.message).toContain(`(did you mean "${near}"?)`);
    expect(seen).toHaveLength(0);
  });

  it('an option with no near name lists the known ones', () => {
    expect(thrown(() => new RegistryClient({ zzzzzz: 1 } as object)).message).toMatch(/^zzzzzz: unknown option of RegistryClient; the options are baseUrl, .*token/);
  });

  it('method options: run, submit, waitForJob refuse a typo before any request', async () => {
    const cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: 'k' });
    const wf = { '1': { class_type: 'SaveImage', inputs: {} } };
    await expect(cloud.run(wf, { onProgres: () => {} } as object)).rejects.toThrow(/onProgres: unknown option of run\(\) \(did you mean "onProgress"\?\)/);
    await expect(cloud.run(wf, { timout: 5 } as object)).rejects.toThrow(/timout: .*did you mean "timeout"/);
    await expect(cloud.submit(wf, { promptID: 'x' } as object)).rejects.toThrow(/promptID: .*did you mean "promptId"/);
    await expect(cloud.waitForJob('p', { polInterval: 5 } as object)).rejects.toThrow(/polInterval: .*did you mean "pollInterval"/);
    expect(seen).toHaveLength(0);
  });

  it('startEmulator refuses a typo', async () => {
    await expect(startEmulator({ personalty: 'spec' } as object)).rejects.toThrow(/personalty: .*did you mean "personality"/);
  });
});
