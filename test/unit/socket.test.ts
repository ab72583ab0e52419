// CloudSocket logic with a stand-in WebSocket: routing, holding, malformed data, lifecycle.
import { afterEach, describe, expect, it } from 'vitest';
import { APIUserAbortError, AuthenticationError, CloudClient, InvalidArgumentError, encodeFrame, type CloudSocket, type SocketEvent } from '../../src/index.ts';
import { FakeSocket } from './fake-socket.ts';

const KEY = 'sk_socket_SECRET_123';
let cloud: CloudClient;
afterEach(() => {
  cloud?.close();
  FakeSocket.all = [];
});
async function open(o: Parameters<CloudClient['connect']>[0] = {}): Promise<[CloudSocket, FakeSocket]> {
  cloud = new CloudClient({ baseUrl: 'https://cloud.test/base', apiKey: KEY });
  const socket = cloud.connect({ WebSocket: FakeSocket as never, ...o });
  await socket.ready();
  return [socket, FakeSocket.all.at(-1)!];
}
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
    cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: KEY, fetch: fetchImpl as typeof fetch });
    const socket = cloud.connect({ WebSocket: FakeSocket as never, idleTimeout: 20 });
    await socket.ready();
    ws = FakeSocket.all.at(-1)!;
    const result = await cloud.run({ '2': { class_type: 'SaveImage', inputs: {} } });
    expect(result.files.map((f) => f.filename)).toEqual(['o.png']);
    expect(socket.listenerCount).toBe(0);
    await new Promise((r) => setTimeout(r, 60));
    expect(FakeSocket.all).toHaveLength(1); // no job left subscribed, so the watchdog never fired
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
    cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: KEY, fetch: fetchImpl as typeof fetch });
    cloud.connect({ WebSocket: Refused as never, reconnect: { baseDelay: 50, maxDelay: 50 } });
    await expect(cloud.run({ '2': { class_type: 'SaveImage', inputs: {} } }, { pollInterval: 10 })).rejects.toBeInstanceOf(AuthenticationError);
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
