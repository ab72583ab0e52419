// Messages that say what is wrong: argument errors name the field, what was given and what is
// allowed; submission errors name the nodes; every failure is a PlatformUIError; nothing secret shows.
import { inspect } from 'node:util';
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { interceptHttp } from './helpers/msw.ts';
import { FakeSocket } from './helpers/fake-socket.ts';
import { recorder } from './helpers/log-recorder.ts';
import { closest } from '../src/args.ts';
import { describeValue } from '../src/schemas/describe.ts';
import { platform } from '../src/platform/node.ts';
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  InvalidArgumentError,
  MissingCredentialsError,
  PlatformUIError,
} from '../src/errors.ts';
import { ExecutionError, JobCancelledError, JobTimeoutError } from '../src/cloud/job-errors.ts';
import { SubmissionError } from '../src/cloud/submission-errors.ts';
import { TaskTimeoutError } from '../src/proxy/errors.ts';
import { CloudClient, ProxyClient, RegistryClient, encodeFrame, type SocketEvent } from '../src/index.ts';

const REGISTRY = 'https://registry.test';
const CLOUD = 'https://cloud.test';
const { server, seen } = interceptHttp();

const registry = () => new RegistryClient({ baseUrl: REGISTRY, token: 'tok_SECRET_123456' });
const proxy = () => new ProxyClient({ baseUrl: REGISTRY, token: 'tok_SECRET_123456' });
const cloud = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) => new CloudClient({ baseUrl: CLOUD, apiKey: 'ck_SECRET_123456', retry: false, ...o });

/** The rejection of `p`, checked to be an InvalidArgumentError thrown before any request. */
async function argError(p: PromiseLike<unknown>): Promise<InvalidArgumentError> {
  const err = await Promise.resolve(p).then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidArgumentError);
  expect(err).toBeInstanceOf(PlatformUIError);
  expect(seen).toHaveLength(0);
  return err as InvalidArgumentError;
}

describe('InvalidArgumentError messages', () => {
  it('searchNodes({ limit: -1 }): the field, the value and the range', async () => {
    const err = await argError(registry().searchNodes({ limit: -1 }));
    expect(err.message).toBe('params.limit: must be an integer of at least 1, got -1');
    expect(err.field).toBe('params.limit');
    expect(err.issues?.[0]).toMatchObject({ code: 'too_small', path: ['limit'] });
  });

  it('searchNodes({ serach }): names the unknown key and the closest known one', async () => {
    const err = await argError(registry().searchNodes({ serach: 'x' } as never));
    expect(err.message).toBe('params.serach: unknown key (did you mean "search"?)');
    expect(err.field).toBe('params.serach');
    expect(err.issues?.[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['serach'] });
  });

  it('an unknown key with nothing close lists the known keys; camelCase finds the wire name', async () => {
    const far = await argError(registry().searchNodes({ colour: 'red' } as never));
    expect(far.message).toBe(
      'params.colour: unknown key; known keys: page, limit, search, repository_url_search, platform_node_search, supported_os, supported_accelerator, include_banned',
    );
    const camel = await argError(registry().searchNodes({ supportedOs: 'MacOS' } as never));
    expect(camel.message).toBe('params.supportedOs: unknown key (did you mean "supported_os"?)');
    const two = await argError(registry().searchNodes({ serach: 'x', limt: 3 } as never));
    expect(two.message).toBe('params: unknown keys "serach" (did you mean "search"?), "limt" (did you mean "limit"?)');
    expect(two.field).toBe('params');
  });

  it("relightImage({ style: 'smoth' }): lists the seven allowed values and suggests one", async () => {
    const err = await argError(proxy().relightImage({ image: 'x', style: 'smoth' as never }));
    expect(err.message).toBe(
      'style: must be one of "standard", "darker_but_realistic", "clean", "smooth", "brighter", "contrasted_n_hdr", "just_composition", got "smoth" (did you mean "smooth"?)',
    );
    expect(err.field).toBe('style');
  });

  it('relightImage({ strenght: 3 }): the field is the unknown key, not ""', async () => {
    const err = await argError(proxy().relightImage({ image: 'x', strenght: 3 } as never));
    expect(err.field).toBe('strenght');
    expect(err.message).toBe('strenght: unknown key (did you mean "light_transfer_strength"?)');
  });

  it('light_transfer_strength: 150 gives the range', async () => {
    const err = await argError(proxy().relightImage({ image: 'x', light_transfer_strength: 150 }));
    expect(err.message).toBe('light_transfer_strength: must be a number from 0 to 100, got 150');
    expect(err.field).toBe('light_transfer_strength');
  });

  it('types, unions, custom checks and missing fields', async () => {
    expect((await argError(proxy().relightImage({ image: 'x', change_background: 'true' as never }))).message).toBe('change_background: must be a boolean, got "true"');
    expect((await argError(proxy().relightImage({ image: 'x', advanced_settings: { engine: 1 as never } }))).message).toBe('advanced_settings.engine: must be a string, got 1');
    expect((await argError(proxy().relightImage({ image: 42 as never }))).message).toBe('image: must be a base64 string, a URL, a Blob, a Uint8Array or an ArrayBuffer, got 42');
    expect((await argError(proxy().relightImage({} as never))).message).toBe('image: is required (a base64 string, a URL, a Blob, a Uint8Array or an ArrayBuffer)');
    expect((await argError(registry().listPublisherNodes('acme', { extra: {} } as never))).message).toBe('params.extra: must be a string, a number or a boolean, got an object');
    expect((await argError(registry().createNode('acme', { id: '' }))).message).toBe('node.id: must not be empty, got ""');
    expect((await argError(registry().createNode('acme', { id: 'x', status: 'Active' as never }))).message).toBe(
      'node.status: must be one of "NodeStatusActive", "NodeStatusDeleted", "NodeStatusBanned", got "Active" (did you mean "NodeStatusActive"?)',
    );
    expect((await argError(registry().deletePublisher(undefined as never))).message).toBe('publisherId: must be a non-empty string, got nothing');
  });

  it('the proxy rules say what was given and what is allowed', async () => {
    expect((await argError(proxy().relightImage({ image: 'x', prompt: 'a (b:1.5)' }))).message).toBe('prompt: every (text:weight) must weigh from 1 to 1.4, got 1.5 in "(b:1.5)"');
    expect((await argError(proxy().relightImage({ image: 'x', webhook_url: 'ftp://h/hook?token=abc' }))).message).toBe('webhook_url: must be an absolute http(s) URL, got a URL with scheme ftp:');
    expect((await argError(proxy().relightImage({ image: 'x', webhook_url: '/hook' }))).message).toBe('webhook_url: must be an absolute http(s) URL, got a relative path');
  });

  it('never echoes the value of a secret field', async () => {
    for (const path of [['token'], ['apiKey'], ['options', 'partnerApiKey'], ['extra_data', 'api_key_platform_org'], ['password'], ['key'], ['auth', 'client_secret']]) {
      expect(describeValue('hunter2-SECRET', path)).toBe('a string (not shown)');
      expect(describeValue(424242, path)).toBe('a number (not shown)');
    }
    expect(describeValue('smoth', ['style'])).toBe('"smoth"');
    expect(describeValue('x'.repeat(100), ['prompt'])).toBe(`"${'x'.repeat(39)}…"`);
    expect(describeValue('https://h/hook?token=abc', ['webhook_url'])).toBe('"https://h/hook?token=[REDACTED]"');
    expect(describeValue([1, 2, 3])).toBe('an array of 3');
    expect(describeValue(new Blob([]))).toBe('a Blob');
    const err = await argError(cloud().submit({ '1': { class_type: 'SaveImage', inputs: {} } }, { partnerApiKey: 4242424242 as never }));
    expect(err.field).toBe('options.partnerApiKey');
    expect(err.message).not.toContain('4242424242');
    expect(`${err.message} ${err.stack} ${JSON.stringify(err)} ${inspect(err)}`).not.toContain('4242424242');
  });

  it('closest() finds small edits, transpositions, words of snake_case names; nothing far', () => {
    const keys = ['search', 'limit', 'page', 'light_transfer_strength', 'supported_os'];
    expect(closest('serach', keys)).toBe('search');
    expect(closest('limt', keys)).toBe('limit');
    expect(closest('strenght', keys)).toBe('light_transfer_strength');
    expect(closest('SupportedOS', keys)).toBe('supported_os');
    expect(closest('colour', keys)).toBeUndefined();
    expect(closest('x', keys)).toBeUndefined();
  });
});

describe('SubmissionError', () => {
  // The local server's 400 (fixtures/local-server/07_errors.jsonl), plus a missing input.
  const rejected = {
    error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details: '', extra_info: {} },
    node_errors: {
      '2': {
        errors: [{ type: 'required_input_missing', message: 'Required input is missing', details: 'filename_prefix', extra_info: { input_name: 'filename_prefix' } }],
        dependent_outputs: ['2'],
        class_type: 'SaveImage',
      },
      '1': {
        errors: [{ type: 'custom_validation_failed', message: 'Custom validation failed for node', details: 'image - Invalid image file: nope_missing.png', extra_info: { input_name: 'image' } }],
        dependent_outputs: ['2'],
        class_type: 'LoadImage',
      },
    },
  };

  it('names each node and why, in node order', async () => {
    server.use(http.post(`${CLOUD}/api/prompt`, () => HttpResponse.json(rejected, { status: 400 })));
    const err: any = await cloud().submit({ '1': { class_type: 'LoadImage', inputs: { image: 'nope_missing.png' } } }).catch((e) => e);
    expect(err).toBeInstanceOf(SubmissionError);
    expect(err.message).toBe(
      'Submission rejected (400): Prompt outputs failed validation — LoadImage #1: image: Custom validation failed for node (Invalid image file: nope_missing.png); SaveImage #2: filename_prefix: Required input is missing',
    );
    expect(err.nodeErrors).toEqual(rejected.node_errors);
    expect(err.body).toEqual(rejected);
  });

  it('stays short: three nodes, two reasons each, then counts', () => {
    const item = (n: number) => ({ type: 't', message: `reason ${n}`, details: '', extra_info: { input_name: `in${n}` } });
    const node_errors: Record<string, unknown> = {};
    for (const id of ['3', '10', '4', '5', '6']) node_errors[id] = { errors: [item(1), item(2), item(3)], dependent_outputs: [], class_type: 'KSampler' };
    const err = new SubmissionError(400, { error: rejected.error, node_errors });
    expect(err.message).toBe(
      'Submission rejected (400): Prompt outputs failed validation — KSampler #3: in1: reason 1, in2: reason 2 (+1 more); KSampler #4: in1: reason 1, in2: reason 2 (+1 more); KSampler #5: in1: reason 1, in2: reason 2 (+1 more); and 2 more nodes',
    );
  });

  it('without node errors, the error and its details', () => {
    const err = new SubmissionError(400, {
      error: { type: 'invalid_prompt', message: 'Cannot execute because node NoSuchNode does not exist.', details: "Node ID '#1'", extra_info: {} },
      node_errors: {},
    });
    expect(err.message).toBe("Submission rejected (400): Cannot execute because node NoSuchNode does not exist. (Node ID '#1')");
    expect(new SubmissionError(400, { error: { type: 'no_prompt', message: 'No prompt provided', details: 'No prompt provided' } }).message).toBe('Submission rejected (400): No prompt provided');
    expect(new SubmissionError(200, { error: 'bad workflow' }).message).toBe('Submission rejected (200): bad workflow');
  });
});

describe('every failure is a PlatformUIError', () => {
  it('uploadImage of a missing path names the path (field "file"), before any request', async () => {
    const err = await argError(cloud().uploadImage('/no/such.png'));
    expect(err.field).toBe('file');
    expect(err.message).toBe('file: cannot read "/no/such.png": no such file or directory (ENOENT)');
    expect((err.cause as { code?: string }).code).toBe('ENOENT');
    expect((await argError(cloud().uploadImage('/'))).message).toBe('file: cannot read "/": it is a directory');
  });

  it('says "an apiKey" and "a token", and where to put them', async () => {
    const c = new CloudClient({ baseUrl: CLOUD, server: 'cloud' });
    const missing: any = await c.getQueue().catch((e) => e);
    expect(missing).toBeInstanceOf(MissingCredentialsError);
    expect(missing.message).toBe('apiKey: this call needs an apiKey; pass it to the client or set PLATFORMUI_API_KEY in Node');
    vi.stubEnv('PLATFORMUI_TOKEN', '');
    const r: any = await new RegistryClient({ baseUrl: REGISTRY }).deletePublisher('acme').catch((e) => e);
    vi.unstubAllEnvs();
    expect(r).toBeInstanceOf(MissingCredentialsError);
    expect(r.message).toBe('token: this call needs a token; pass it to the client or set PLATFORMUI_TOKEN in Node');
    expect(seen).toHaveLength(0);
  });

  it('a credential function that throws, and a file that cannot be written', async () => {
    const failing = new RegistryClient({ baseUrl: REGISTRY, token: () => Promise.reject(new Error('vault is down')) });
    const err: any = await failing.deletePublisher('acme').catch((e) => e);
    expect(err).toBeInstanceOf(MissingCredentialsError);
    expect(err.message).toBe('token: the token function failed: vault is down');
    expect(err.cause.message).toBe('vault is down');
    const write: any = await platform.saveToFile(new Response('abc').body!, '/no/such/dir/out.png').catch((e) => e);
    expect(write).toBeInstanceOf(InvalidArgumentError);
    expect(write.message).toBe('destination: cannot write "/no/such/dir/out.png": no such file or directory (ENOENT)');
    expect(seen).toHaveLength(0);
  });

  it("an abort keeps the signal's reason as cause (before and during the request)", async () => {
    const before = new AbortController();
    const reason = new Error('user left the page');
    before.abort(reason);
    const early: any = await registry().listPublishers({ signal: before.signal }).catch((e) => e);
    expect(early).toBeInstanceOf(APIUserAbortError);
    expect(early.cause).toBe(reason);

    server.use(http.get(`${REGISTRY}/publishers`, () => new Promise<never>(() => undefined)));
    const during = new AbortController();
    const log = recorder();
    const pending = new RegistryClient({ baseUrl: REGISTRY, token: 'tok_SECRET_123456', logger: log.logger }).listPublishers({ signal: during.signal }).catch((e) => e);
    await vi.waitFor(() => expect(seen).toHaveLength(1));
    during.abort('navigated away');
    const late: any = await pending;
    expect(late).toBeInstanceOf(APIUserAbortError);
    expect(late.cause).toBe('navigated away');
    expect(JSON.stringify(late)).not.toContain('navigated');
    // fetch rejects with the caller's reason, not an AbortError: still no retry, nor a warning of one.
    expect(seen).toHaveLength(1);
    expect(log.lines).toEqual([]);
  });

  it('JobTimeoutError and TaskTimeoutError are not connection errors: the job or task may still run (a retry wrapper must not start another)', () => {
    const err = new JobTimeoutError('p-123', 120_000);
    expect(err).not.toBeInstanceOf(APITimeoutError);
    expect(err).not.toBeInstanceOf(APIConnectionError);
    expect(err).toBeInstanceOf(PlatformUIError);
    expect(err.name).toBe('JobTimeoutError');
    expect(err.message).toBe('Job p-123 sent nothing for 120000 ms');
    expect(String(err.stack)).toContain('JobTimeoutError: Job p-123 sent nothing for 120000 ms');
    expect(err).toMatchObject({ promptId: 'p-123', timeout: 120_000 });
    const task = new TaskTimeoutError('image-relight', 't-1', 60);
    expect(task).not.toBeInstanceOf(APIConnectionError);
    expect(task).toMatchObject({ taskId: 't-1', timeout: 60 });
    expect(new APITimeoutError('GET', 'https://h/x', 50)).toMatchObject({ timeout: 50, sent: 'maybe', message: 'Timed out after 50 ms: GET https://h/x' });
  });

  it('APIConnectionError says whether the request may have reached the server, and names a submission\'s job', () => {
    expect(new APIConnectionError('POST', 'https://h/api/prompt', 'Connection failed (ECONNREFUSED)', 'ECONNREFUSED')).toMatchObject({ sent: 'no', promptId: undefined });
    expect(new APIConnectionError('POST', 'https://h/api/prompt', 'Connection failed (ECONNRESET)', 'ECONNRESET')).toMatchObject({ sent: 'maybe' });
    expect(new APIConnectionError('POST', 'https://h/api/prompt', 'Connection failed')).toMatchObject({ sent: 'maybe' });
    const lost = new APITimeoutError('POST', 'https://h/api/prompt', 50, { promptId: 'p-9' });
    expect(lost).toMatchObject({ sent: 'maybe', promptId: 'p-9' });
    expect(lost.message).toBe('Timed out after 50 ms: POST https://h/api/prompt (job p-9 may exist)');
    expect(new APIConnectionError('POST', 'u', 'Connection failed (ENOTFOUND)', 'ENOTFOUND', { promptId: 'p-8' }).message).toContain('(job p-8 was not sent)');
    // Naming the job keeps the class: a timed-out submission is still an APITimeoutError, with its timeout.
    const named = new APITimeoutError('POST', 'https://h/api/prompt', 70).aboutJob('p-7');
    expect(named).toBeInstanceOf(APITimeoutError);
    expect(named).toMatchObject({ timeout: 70, promptId: 'p-7', sent: 'maybe' });
  });
});

describe('baseUrl with a user name or password', () => {
  afterEach(() => vi.unstubAllEnvs());

  it.each(['http//admin:pw-SECRET@host', 'ftp:/admin:pw-SECRET@host', 'admin:pw-SECRET@'])('never echoes or "fixes" a malformed %s', (baseUrl) => {
    let err: any;
    try {
      new RegistryClient({ baseUrl });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.field).toBe('baseUrl');
    for (const text of [err.message, err.stack, JSON.stringify(err), inspect(err)]) expect(text).not.toContain('pw-SECRET');
  });

  it.each(['http://admin:pw-SECRET@host', 'https://admin@host/api', 'admin:pw-SECRET@host', 'http://admin:pw-SECRET@host:8080/path?q=1'])(
    'rejects %s in the constructor without echoing it',
    (baseUrl) => {
      let err: any;
      try {
        new RegistryClient({ baseUrl });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect(err.field).toBe('baseUrl');
      expect(err.message).toBe('baseUrl: must not contain a user name or password (fetch cannot send them in a URL): pass the credential as an option or a header instead');
      for (const text of [err.message, err.stack, JSON.stringify(err), inspect(err)]) {
        expect(text).not.toContain('pw-SECRET');
        expect(text).not.toContain('admin');
      }
    },
  );

  it('from the environment too, and for every client', () => {
    vi.stubEnv('PLATFORMUI_BASE_URL', 'http://admin:pw-SECRET@host');
    expect(() => new ProxyClient()).toThrow('baseUrl: must not contain a user name or password (from PLATFORMUI_BASE_URL)');
    expect(() => new CloudClient({ baseUrl: 'https://u:pw-SECRET@cloud.test' })).toThrow(InvalidArgumentError);
  });

  it('other bad base URLs say what was given and suggest the fix', () => {
    expect(() => new RegistryClient({ baseUrl: 'localhost:8787' })).toThrow('baseUrl: must be an absolute http(s) URL, got "localhost:8787" (did you mean "http://localhost:8787"?)');
    expect(() => new RegistryClient({ baseUrl: 'ftp://h' })).toThrow('baseUrl: must be an absolute http(s) URL, got "ftp://h/"');
    vi.stubEnv('PLATFORMUI_BASE_URL', '');
    expect(() => new RegistryClient()).toThrow('baseUrl: is required: pass it to the client or set PLATFORMUI_BASE_URL in Node, got nothing');
  });
});

describe('error members are camelCase; the wire payload stays as data', () => {
  it('ExecutionError', () => {
    const data = {
      prompt_id: 'p1',
      node_id: '1',
      node_type: 'LoadImage',
      executed: [],
      exception_message: "cannot identify image file 'x.png'\n",
      exception_type: 'PIL.UnidentifiedImageError',
      traceback: ['  File "execution.py", line 518\n'],
    };
    const err = new ExecutionError('p1', data);
    expect(err).toMatchObject({
      promptId: 'p1',
      nodeId: '1',
      nodeType: 'LoadImage',
      exceptionType: 'PIL.UnidentifiedImageError',
      exceptionMessage: "cannot identify image file 'x.png'\n",
      traceback: data.traceback,
    });
    expect(err.data).toBe(data);
    expect(err.message).toBe("Job p1 failed in LoadImage #1: PIL.UnidentifiedImageError: cannot identify image file 'x.png'");
    expect(err).not.toHaveProperty('prompt_id');
    expect(err).not.toHaveProperty('exception_type');
  });

  it('JobCancelledError', () => {
    const err = new JobCancelledError('p2', { prompt_id: 'p2', node_id: '3' });
    expect(err).toMatchObject({ promptId: 'p2', data: { prompt_id: 'p2', node_id: '3' }, message: 'Job p2 was cancelled' });
    expect(err).not.toHaveProperty('prompt_id');
  });

  it('BinaryEvent.promptId (the envelope is the SDK\'s; the frame metadata keeps wire names)', async () => {
    const c = cloud();
    try {
      const socket = c.connect({ WebSocket: FakeSocket as never });
      await socket.ready();
      const got: SocketEvent[] = [];
      socket.subscribe('B', (e) => void got.push(e));
      FakeSocket.all.at(-1)!.push(encodeFrame({ type: 'preview_image_with_metadata', metadata: { prompt_id: 'B', node_id: '3' }, image: new Uint8Array([0xff, 0xd8, 0xff]) }).buffer);
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ type: 'binary', promptId: 'B', frame: { promptId: 'B', metadata: { prompt_id: 'B' } } });
      expect(got[0]).not.toHaveProperty('prompt_id');
    } finally {
      c.close();
      FakeSocket.all = [];
    }
  });
});

describe('SubmissionError.nodeErrors agrees with the schema', () => {
  it('types node_errors exactly when the SubmissionErrorBody schema accepts it', async () => {
    const { SubmissionErrorBody } = await import('../src/schemas/rules.generated.ts');
    const { validate } = await import('../src/schemas/validate.ts');
    const good = { '2': { errors: [{ type: 'required_input_missing', message: 'Required input is missing', details: 'filename_prefix', extra_info: { input_name: 'filename_prefix' } }], dependent_outputs: ['2'], class_type: 'SaveImage' } };
    const cases: unknown[] = [
      good,
      {},
      { '2': { errors: [] } },
      { '2': { errors: [{ type: 'x', message: 'y' }] } },
      { '2': { errors: [{ type: 'x' }] } },
      { '2': { errors: [{ type: 1, message: 'y' }] } },
      { '2': { errors: 'nope' } },
      { '2': { errors: [], class_type: 3 } },
      { '2': { errors: [], dependent_outputs: [1] } },
      { '2': { errors: [{ type: 'x', message: 'y', extra_info: [] }] } },
      { '2': null },
      [],
      'text',
    ];
    for (const node_errors of cases) {
      const bySchema = validate(SubmissionErrorBody, { error: 'e', node_errors }).ok;
      const byClass = new SubmissionError(400, { error: 'e', node_errors }).nodeErrors !== undefined;
      expect([node_errors, byClass]).toEqual([node_errors, bySchema]);
    }
  });
});

describe('random ids', () => {
  it('are version 4 UUIDs, also where crypto.randomUUID is missing (a page over plain http on another host)', async () => {
    const { randomUuid } = await import('../src/cloud/uuid.ts');
    const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(randomUuid()).toMatch(v4);
    const native = crypto.randomUUID;
    (crypto as { randomUUID?: unknown }).randomUUID = undefined;
    try {
      const ids = Array.from({ length: 200 }, () => randomUuid());
      for (const id of ids) expect(id).toMatch(v4);
      expect(new Set(ids).size).toBe(200);
    } finally {
      crypto.randomUUID = native;
    }
  });
});
