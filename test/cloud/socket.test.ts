// CloudSocket logic with a stand-in WebSocket: routing, holding, malformed data, lifecycle.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STABLE_AFTER_MS } from '../../src/cloud/socket.ts';
import { APIUserAbortError, AuthenticationError, CloudClient, InvalidArgumentError, PlatformUIError, SocketRefusedError, encodeFrame, type CloudSocket, type SocketEvent } from '../../src/index.ts';
import { FakeSocket } from '../helpers/fake-socket.ts';
import { recorder } from '../helpers/log-recorder.ts';

const KEY = 'sk_socket_SECRET_123';
let cloud: CloudClient;
/** What the client logged at the default level (warn and error): tests that provoke a warning assert it. */
let log = recorder();
afterEach(() => {
  cloud?.close();
  FakeSocket.all = [];
  vi.useRealTimers();
});
async function open(o: Parameters<CloudClient['connect']>[0] = {}): Promise<[CloudSocket, FakeSocket]> {
  log = recorder();
  cloud = new CloudClient({ baseUrl: 'https://cloud.test/base', apiKey: KEY, logger: log.logger });
  const socket = cloud.connect({ WebSocket: FakeSocket as never, ...o });
  await socket.ready();
  return [socket, FakeSocket.all.at(-1)!];
}
/** Whether a promise has settled by the time queued callbacks ran (no timing: one macrotask). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => void (done = true),
    () => void (done = true),
  );
  await new Promise((r) => setTimeout(r, 0));
  return done;
}
/** A server closes the connection with `code` and `reason` (a close frame). */
function serverCloses(ws: FakeSocket, code: number, reason = ''): void {
  ws.readyState = 3;
  (ws.onclose as ((ev: { code: number; reason: string }) => void) | null)?.({ code, reason });
}
const warnings = () => log.of('warn').map((l) => l.message);
const progress = (id: string, value = 1) => ({ type: 'progress', data: { value, max: 10, prompt_id: id, node: '3' } });

describe('CloudSocket', () => {
  it('connects to wss://host/base/ws with clientId and token, binaryType arraybuffer, feature flags first', async () => {
    const [socket, ws] = await open();
    const u = new URL(ws.url);
    expect(`${u.protocol}//${u.host}${u.pathname}`).toBe('wss://cloud.test/base/ws');
    expect(u.searchParams.get('token')).toBe(KEY);
    expect(u.searchParams.get('clientId')).toBe(socket.clientId);
    expect(socket.url).not.toContain(KEY);
    expect(ws.binaryType).toBe('arraybuffer');
    expect(JSON.parse(ws.sent[0]!)).toEqual({ type: 'feature_flags', data: { supports_preview_metadata: true } });
  });

  it('shares one socket per client', async () => {
    const [socket] = await open();
    expect(cloud.connect()).toBe(socket);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('routes events by prompt_id and holds the ones nobody claimed yet', async () => {
    const [socket, ws] = await open();
    const a: SocketEvent[] = [];
    socket.subscribe('A', (e) => a.push(e));
    ws.push(progress('B', 1));
    ws.push(progress('A', 2));
    ws.push(progress('B', 3));
    expect(a).toHaveLength(1);
    const b: SocketEvent[] = [];
    socket.subscribe('B', (e) => b.push(e));
    expect(b.map((e) => (e as { data: { value: number } }).data.value)).toEqual([1, 3]);
    ws.push(progress('B', 4));
    expect(b).toHaveLength(3);
  });

  it('survives malformed JSON, wrong types, unknown types and throwing handlers', async () => {
    const [socket, ws] = await open();
    const messages: string[] = [];
    const errors: unknown[] = [];
    socket.on('message', (m) => void messages.push(m.type));
    socket.on('error', (e) => void errors.push(e.error));
    socket.on('progress', () => {
      throw new Error('handler bug');
    });
    ws.push('{not json');
    ws.push({ type: 'progress', data: { value: 'x', max: 1, prompt_id: 'A' } });
    ws.push({ type: 'brand_new_event', data: { prompt_id: 'A' } });
    ws.push(progress('A'));
    ws.push(new Uint8Array([0, 0, 0, 4, 0, 0, 0, 99]).buffer); // type 4 with a lying metadata length
    await Promise.resolve();
    expect(messages).toEqual(['malformed', 'invalid', 'unknown', 'progress']);
    expect(errors).toHaveLength(2); // the handler's throw and the frame decode error
    expect(socket.state).toBe('open');
    expect(warnings()).toEqual([
      expect.stringContaining('a malformed message'),
      expect.stringContaining('a progress message that does not match its schema'),
      expect.stringContaining('a malformed binary frame'),
    ]);
  });

  it('attributes type-1 previews to the job that last reported progress, type-4 by metadata', async () => {
    const [socket, ws] = await open();
    const got: Array<[string, string]> = [];
    socket.subscribe('A', (e) => void got.push(['A', e.type]));
    socket.subscribe('B', (e) => void got.push(['B', e.type]));
    ws.push(progress('A'));
    ws.push(encodeFrame({ type: 'preview_image', imageType: 2, image: new Uint8Array([0x89, 0x50]) }).buffer);
    ws.push(encodeFrame({ type: 'preview_image_with_metadata', metadata: { prompt_id: 'B', node_id: '3' }, image: new Uint8Array([0xff, 0xd8, 0xff]) }).buffer);
    expect(got).toEqual([['A', 'progress'], ['A', 'binary'], ['B', 'binary']]);
  });

  it('gives a bounded async iterator per job', async () => {
    const [socket, ws] = await open();
    const it = socket.events({ promptId: 'A', bufferSize: 2 });
    for (let v = 1; v <= 4; v++) ws.push(progress('A', v));
    const first = await it.next();
    expect((first.value as { data: { value: number } }).data.value).toBe(3); // oldest dropped
    await it.return!();
    expect((await it.next()).done).toBe(true);
  });

  it('reconnects with backoff, keeps the clientId, announces reconnected', async () => {
    const [socket, ws] = await open({ reconnect: { baseDelay: 1, maxDelay: 5 } });
    const events: string[] = [];
    socket.on('reconnecting', (e) => void events.push(`reconnecting:${e.attempt}`));
    socket.on('reconnected', () => void events.push('reconnected'));
    ws.drop();
    await socket.once('reconnected');
    expect(events).toEqual(['reconnecting:1', 'reconnected']);
    expect(new URL(FakeSocket.all[1]!.url).searchParams.get('clientId')).toBe(socket.clientId);
  });

  it('gives up on a silent socket at once while a job is followed, even if the close handshake never comes', async () => {
    // FakeSocket.close() never fires onclose: a half-open link.
    const [socket] = await open({ idleTimeout: 30, reconnect: { baseDelay: 1, maxDelay: 1 } });
    socket.subscribe('A', () => {});
    const dropped = await socket.once('reconnecting');
    expect(dropped.code).toBe(4000);
    await socket.once('reconnected');
    expect(FakeSocket.all).toHaveLength(2);
  });

  it('events() and once() settle for aborted signals, closed sockets and concurrent next() calls', async () => {
    const [socket, ws] = await open();
    expect((await socket.events({ signal: AbortSignal.abort() }).next()).done).toBe(true);
    await expect(socket.once('progress', AbortSignal.abort())).rejects.toBeInstanceOf(APIUserAbortError);
    const ac = new AbortController();
    const it = socket.events({ promptId: 'A', signal: ac.signal });
    const a = it.next();
    const b = it.next();
    ws.push(progress('A', 1));
    expect((await a).done).toBe(false);
    ac.abort();
    expect((await b).done).toBe(true);
    socket.close();
    expect((await socket.events().next()).done).toBe(true);
  });

  it('run(): a job that ended before its submit answered resolves and leaves nothing subscribed', async () => {
    let ws!: FakeSocket;
    const fetchImpl = async (input: RequestInfo | URL) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname === '/api/prompt') {
        // The whole job happens before the submit response arrives.
        ws.push({ type: 'executed', data: { node: '2', output: { images: [{ filename: 'o.png', subfolder: '', type: 'output' }] }, prompt_id: 'P' } });
        ws.push({ type: 'execution_success', data: { prompt_id: 'P', timestamp: 'not-a-number' } }); // off-spec payload
        return Response.json({ prompt_id: 'P' });
      }
      return Response.json({ status: 'in_progress' });
    };
    log = recorder();
    cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: KEY, fetch: fetchImpl as typeof fetch, logger: log.logger });
    const socket = cloud.connect({ WebSocket: FakeSocket as never, idleTimeout: 20 });
    await socket.ready();
    ws = FakeSocket.all.at(-1)!;
    const result = await cloud.run({ '2': { class_type: 'SaveImage', inputs: {} } });
    expect(result.files.map((f) => f.filename)).toEqual(['o.png']);
    expect(socket.listenerCount).toBe(0);
    await new Promise((r) => setTimeout(r, 60));
    expect(FakeSocket.all).toHaveLength(1); // no job left subscribed, so the watchdog never fired
    expect(warnings()).toEqual([expect.stringContaining('a execution_success message that does not match its schema')]);
  });

  it('run(): a key revoked while polling rejects instead of polling forever', async () => {
    class Refused {
      constructor() {
        throw new Error('connection refused');
      }
    }
    const fetchImpl = async (input: RequestInfo | URL) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname === '/api/prompt') return Response.json({ prompt_id: 'P' });
      return Response.json({ error: 'unauthorized', message: 'key revoked' }, { status: 401 });
    };
    log = recorder();
    cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: KEY, fetch: fetchImpl as typeof fetch, logger: log.logger });
    const socket = cloud.connect({ WebSocket: Refused as never, reconnect: { baseDelay: 50, maxDelay: 50 } });
    await expect(cloud.run({ '2': { class_type: 'SaveImage', inputs: {} } }, { pollInterval: 10 })).rejects.toBeInstanceOf(AuthenticationError);
    // The socket connect() opened keeps trying: its first retry is the warning's moment.
    await socket.once('reconnecting');
    expect(warnings()).toEqual([expect.stringContaining('socket could not connect')]);
  });

  it('does not watch an idle socket that follows no job', async () => {
    const [, ws] = await open({ idleTimeout: 10 });
    await new Promise((r) => setTimeout(r, 40));
    expect(ws.readyState).toBe(1);
  });

  it('close() ends iterators, clears listeners and never reconnects', async () => {
    const [socket, ws] = await open({ reconnect: { baseDelay: 1 } });
    socket.on('progress', () => {});
    socket.subscribe('A', () => {});
    const it = socket.events();
    const pending = it.next();
    socket.close();
    expect((await pending).done).toBe(true);
    expect(socket.listenerCount).toBe(0);
    ws.drop();
    await new Promise((r) => setTimeout(r, 20));
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('run() and waitForJob() reject bad options at once', async () => {
    cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: KEY });
    const wf = { '1': { class_type: 'SaveImage', inputs: {} } };
    await expect(cloud.run(wf, { timeout: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(cloud.run(wf, { pollInterval: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(cloud.waitForJob('p', { pollInterval: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('tells a late subscriber when the hold dropped some of its events', async () => {
    const [socket, ws] = await open();
    for (let i = 0; i < 2001; i++) ws.push(progress('late', i));
    const got: SocketEvent[] = [];
    let lost = 0;
    socket.subscribe('late', (e) => void got.push(e), { onLost: () => void lost++ });
    expect(got).toHaveLength(2000);
    expect(lost).toBe(1);
    ws.push(progress('fits'));
    let lost2 = 0;
    socket.subscribe('fits', () => undefined, { onLost: () => void lost2++ });
    expect(lost2).toBe(0);
  });
});

describe('CloudSocket reconnects', () => {
  /** A server (a proxy, a load balancer) that accepts every connection and closes it at once. */
  class HangUp extends FakeSocket {
    constructor(url: string) {
      super(url);
      queueMicrotask(() => this.drop(1001));
    }
  }

  it('counts a connection the server closes at once as a failed attempt: the delay grows, within [step/2, step]', async () => {
    log = recorder();
    cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: KEY, logger: log.logger });
    const socket = cloud.connect({ WebSocket: HangUp as never, reconnect: { baseDelay: 8, maxDelay: 64 } });
    const seen: Array<{ attempt: number; delay: number }> = [];
    socket.on('reconnecting', ({ attempt, delay }) => void seen.push({ attempt, delay }));
    while (seen.length < 6) await socket.once('reconnecting');
    expect(seen.map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const { attempt, delay } of seen) {
      const step = Math.min(64, 8 * 2 ** (attempt - 1));
      expect(delay, `attempt ${attempt}`).toBeGreaterThanOrEqual(step / 2);
      expect(delay, `attempt ${attempt}`).toBeLessThanOrEqual(step);
    }
    // The first drop is no news; the reconnect closed again at once is, once.
    expect(warnings()).toEqual([expect.stringMatching(/socket could not connect to .*: the server closed it \d+ ms after opening \(code 1001\); retrying/)]);
  });

  it('starts over after a connection that stayed open STABLE_AFTER_MS', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const [socket, ws] = await open({ reconnect: { baseDelay: 1, maxDelay: 1 } });
    const attempts: number[] = [];
    socket.on('reconnecting', (e) => void attempts.push(e.attempt));
    ws.drop();
    await socket.once('reconnected');
    FakeSocket.all.at(-1)!.drop(); // short-lived: a second failure in a row
    await socket.once('reconnected');
    vi.setSystemTime(Date.now() + STABLE_AFTER_MS);
    FakeSocket.all.at(-1)!.drop(); // lasted: counting starts over
    await socket.once('reconnected');
    expect(attempts).toEqual([1, 2, 1]);
  });

  it('defaults: the first reconnect waits 250 to 500 ms', async () => {
    const [socket, ws] = await open();
    const next = socket.once('reconnecting');
    ws.drop();
    const { delay } = await next;
    expect(delay).toBeGreaterThanOrEqual(250);
    expect(delay).toBeLessThanOrEqual(500);
  });

  for (const code of [1008, 4001, 4403, 4999]) {
    it(`ends the retries on close code ${code} with a SocketRefusedError (redacted), warned once`, async () => {
      const [socket, ws] = await open({ reconnect: { baseDelay: 1, maxDelay: 1 } });
      socket.subscribe('A', () => undefined);
      const errors: unknown[] = [];
      socket.on('error', (e) => void errors.push(e.error));
      const closed = socket.once('close');
      serverCloses(ws, code, `bad token ${KEY} (see https://cloud.test/ws?token=${KEY})`);
      const event = await closed;
      expect(socket.state).toBe('closed');
      expect(event.code).toBe(code);
      expect(event.error).toBeInstanceOf(SocketRefusedError);
      expect(event.error).toMatchObject({ code, reason: event.reason });
      expect(errors).toEqual([event.error]);
      expect(JSON.stringify([event, event.error?.message, log.lines])).not.toContain(KEY);
      await expect(socket.ready()).rejects.toBe(event.error);
      await expect(socket.once('progress')).rejects.toBe(event.error);
      await new Promise((r) => setTimeout(r, 10));
      expect(FakeSocket.all).toHaveLength(1); // never tried again
      expect(warnings()).toEqual([expect.stringContaining(`refused the WebSocket (close code ${code}`)]);
      expect(warnings()[0]).toContain('runs in flight go on by polling');
    });
  }

  it('a connection that lived STABLE_AFTER_MS and then got a 4xxx code (a session that expired) is tried again; a refusal of the next one ends it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const [socket, ws] = await open({ reconnect: { baseDelay: 1, maxDelay: 1 } });
    vi.setSystemTime(Date.now() + STABLE_AFTER_MS);
    const back = socket.once('reconnected');
    serverCloses(ws, 4001, 'session expired');
    await back;
    expect(socket.state).toBe('open');
    const closed = socket.once('close');
    serverCloses(FakeSocket.all.at(-1)!, 4001, 'token refused');
    expect((await closed).error).toBeInstanceOf(SocketRefusedError);
    expect(FakeSocket.all).toHaveLength(2);
    expect(warnings()).toEqual([expect.stringContaining('refused the WebSocket (close code 4001')]);
  });

  for (const code of [1000, 1001, 1006, 1011, 3000]) {
    it(`reconnects after close code ${code}`, async () => {
      const [socket, ws] = await open({ reconnect: { baseDelay: 1, maxDelay: 1 } });
      const back = socket.once('reconnected');
      serverCloses(ws, code);
      await back;
      expect(socket.state).toBe('open');
    });
  }

  it("does not take its own idle drop (code 4000) for a refusal, even if the close frame comes back", async () => {
    // A socket whose close() completes the handshake at once, echoing the code, as a live server does.
    class Echo extends FakeSocket {
      override close(code?: number): void {
        serverCloses(this, code ?? 1005);
      }
    }
    const [socket] = await open({ WebSocket: Echo as never, idleTimeout: 20, reconnect: { baseDelay: 1, maxDelay: 1 } });
    socket.subscribe('A', () => undefined);
    const dropped = await socket.once('reconnecting');
    expect(dropped.code).toBe(4000);
    await socket.once('reconnected');
    expect(socket.state).toBe('open');
    expect(warnings()).toEqual([]);
  });
});

describe('CloudSocket awaitables settle on close()', () => {
  it('once(), ready() and events() iterators', async () => {
    const [socket] = await open();
    const once = socket.once('progress');
    const lifecycle = socket.once('reconnected');
    const it = socket.events({ promptId: 'A' });
    const next = it.next();
    const closeEvent = socket.once('close');
    const all = Promise.allSettled([once, lifecycle, next, closeEvent]);
    socket.close();
    expect(await settled(all)).toBe(true);
    const [a, b, c, d] = await all;
    expect(a).toEqual({ status: 'rejected', reason: new PlatformUIError('Socket is closed') });
    expect(a.status === 'rejected' && a.reason).toBeInstanceOf(PlatformUIError);
    expect(b.status === 'rejected' && b.reason).toBeInstanceOf(PlatformUIError);
    expect(c).toEqual({ status: 'fulfilled', value: { value: undefined, done: true } });
    expect(d).toEqual({ status: 'fulfilled', value: { code: 1000, reason: 'closed by client' } });
    await expect(socket.once('progress')).rejects.toThrow('Socket is closed');
    await expect(socket.ready()).rejects.toThrow('Socket is closed');
    expect(socket.listenerCount).toBe(0);
  });

  it('ready() while connecting, and once() with a signal, settle on close()', async () => {
    cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: KEY });
    const socket = cloud.connect({ WebSocket: FakeSocket as never });
    const ready = socket.ready();
    const once = socket.once('status', new AbortController().signal);
    socket.close();
    await expect(ready).rejects.toThrow('Socket is closed');
    await expect(once).rejects.toThrow('Socket is closed');
  });
});

describe('CloudSocket holds only what can still be claimed', () => {
  const job = (id: string) => [
    { type: 'execution_start', data: { prompt_id: id, timestamp: 1 } },
    { type: 'progress', data: { value: 1, max: 2, prompt_id: id, node: '3' } },
  ];

  it('an idle socket releases foreign jobs\' events after holdFor, with no message to trigger it; a late subscriber hears onLost', async () => {
    const [socket, ws] = await open({ holdFor: 20 });
    for (const m of job('foreign')) ws.push(m);
    expect(socket.held).toMatchObject({ jobs: 1, events: 2 });
    while (socket.held.jobs > 0) await new Promise((r) => setTimeout(r, 5));
    expect(socket.held).toEqual({ jobs: 0, events: 0, bytes: 0 });
    // Its later events are not held again: the job's start is gone for good.
    ws.push(job('foreign')[1]);
    expect(socket.held.jobs).toBe(0);
    const got: SocketEvent[] = [];
    let lost = 0;
    socket.subscribe('foreign', (e) => void got.push(e), { onLost: () => void lost++ });
    expect([got.length, lost]).toEqual([0, 1]);
  });

  it('a job claimed within holdFor gets every event, and nothing is held after', async () => {
    const [socket, ws] = await open();
    for (const m of job('mine')) ws.push(m);
    const got: SocketEvent[] = [];
    let lost = 0;
    socket.subscribe('mine', (e) => void got.push(e), { onLost: () => void lost++ });
    expect([got.map((e) => e.type), lost]).toEqual([['execution_start', 'progress'], 0]);
    expect(socket.held).toEqual({ jobs: 0, events: 0, bytes: 0 });
  });

  it('bounds the held text to 1 MiB: the oldest jobs go first, and their subscribers hear onLost', async () => {
    const [socket, ws] = await open();
    const big = (id: string) => JSON.stringify({ type: 'progress', data: { value: 1, max: 2, prompt_id: id, node: 'x'.repeat(300_000) } });
    for (const id of ['j1', 'j2', 'j3', 'j4']) ws.push(big(id));
    expect(socket.held.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(socket.held.jobs).toBe(3);
    const lostBy: string[] = [];
    const replayed: string[] = [];
    for (const id of ['j1', 'j4']) socket.subscribe(id, () => void replayed.push(id), { onLost: () => void lostBy.push(id) });
    expect(lostBy).toEqual(['j1']);
    expect(replayed).toEqual(['j4']);
  });

  it('a job with more text than the bound keeps its first events and is marked lost', async () => {
    const [socket, ws] = await open();
    const big = JSON.stringify({ type: 'progress', data: { value: 1, max: 2, prompt_id: 'huge', node: 'x'.repeat(400_000) } });
    for (let i = 0; i < 4; i++) ws.push(big);
    expect(socket.held.events).toBe(2);
    let lost = 0;
    let replayed = 0;
    socket.subscribe('huge', () => void replayed++, { onLost: () => void lost++ });
    expect([replayed, lost]).toEqual([2, 1]);
  });
});

describe('a real server\'s executed with output: null', () => {
  it('reaches executed listeners as executed, with no warning at the default level', async () => {
    const [socket, ws] = await open();
    const got: unknown[] = [];
    socket.on('executed', (m) => void got.push(m.data.output));
    ws.push({ type: 'executed', data: { node: '1', display_node: '1', output: null, prompt_id: 'P' } });
    expect(got).toEqual([null]);
    expect(log.lines).toEqual([]);
  });
});
