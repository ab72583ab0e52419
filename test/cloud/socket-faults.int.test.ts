// The socket's faults over real loopback sockets (issue 23, items 5, 8 and 10): a server
// that accepts the WebSocket and closes it at once, close codes by which a server refuses
// it, the socket's own idle drop, and what an idle socket keeps of other jobs' events.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient, SocketRefusedError, type CloudSocket } from '../../src/index.ts';
import { EMULATOR_API_KEY, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { recorder } from '../helpers/log-recorder.ts';
import { invertWorkflow, until } from '../helpers/emulator-runs.ts';

const KEY = 'sk_faults_SECRET_4242';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let emu: Emulator;
const clients: CloudClient[] = [];
const servers: WebSocketServer[] = [];
beforeAll(async () => {
  emu = await startEmulator({ cloud: { stepMs: 20 } as never });
});
afterAll(() => emu.close());
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) {
    for (const ws of s.clients) ws.terminate();
    await new Promise((r) => s.close(r));
  }
  emu.cloud.resetSocketFaults();
  emu.requests.length = 0;
});

/** A client of `baseUrl` whose log is recorded (at the default level unless told). */
function client(baseUrl: string, apiKey = KEY) {
  const log = recorder();
  const c = new CloudClient({ baseUrl, apiKey, logger: log.logger });
  clients.push(c);
  return { c, log, warnings: () => log.of('warn').map((l) => l.message) };
}

/** A WebSocket server of the test's own on a loopback port, counting connections. */
async function wsServer(onConnection: (ws: WebSocket) => void) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  servers.push(wss);
  await new Promise((r) => wss.once('listening', r));
  let connections = 0;
  wss.on('connection', (ws) => {
    connections++;
    onConnection(ws);
  });
  const { port } = wss.address() as { port: number };
  return { wss, url: `http://127.0.0.1:${port}`, connections: () => connections };
}

let image: string | undefined;
async function input(c: CloudClient): Promise<string> {
  image ??= (await c.uploadImage(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1]), { filename: 'faults.png' })).name;
  return image;
}
/** Counts the connections `socket` opened. */
function opens(socket: CloudSocket): () => number {
  let n = 0;
  socket.on('open', () => void n++);
  return () => n;
}

describe('a server that accepts the WebSocket and closes it at once', () => {
  it('gets at most 6 connections in 10 s with the default backoff, and one warning', async () => {
    const server = await wsServer((ws) => ws.close(1001, 'going away'));
    const { c, warnings } = client(server.url);
    const socket = c.connect();
    const attempts: number[] = [];
    socket.on('reconnecting', (e) => void attempts.push(e.attempt));
    await sleep(10_000);
    c.close();
    expect(server.connections()).toBeLessThanOrEqual(6);
    expect(server.connections()).toBeGreaterThanOrEqual(2); // it does keep trying
    expect(attempts).toEqual(Array.from({ length: attempts.length }, (_, i) => i + 1));
    expect(warnings()).toEqual([expect.stringMatching(/^\[platformui\] socket could not connect to ws:\/\/127\.0\.0\.1:\d+\/ws\?clientId=[\w-]+&token=\[REDACTED\]: the server closed it \d+ ms after opening \(code 1001\); retrying$/)]);
  }, 20_000);

  it('a run() in flight completes by polling (the emulator closes every socket once open)', async () => {
    const { c, warnings } = client(emu.url, EMULATOR_API_KEY);
    const wf = invertWorkflow(await input(c), 'hangup');
    emu.cloud.closeSocketsOnOpen();
    const socket = c.connect();
    const opened = opens(socket);
    const result = await c.run(wf, { pollInterval: 20 });
    expect(result.status).toBe('completed');
    expect(result.files[0]!.filename).toContain('hangup');
    expect(socket.state).toBe('reconnecting');
    expect(opened()).toBeGreaterThanOrEqual(1);
    expect(opened()).toBeLessThanOrEqual(6);
    for (const w of warnings()) expect(w).toMatch(/the server closed it \d+ ms after opening \(code 1001\)/);
  });
});

describe('a close code by which the server refuses the socket', () => {
  for (const code of [1008, 4001]) {
    it(`${code}: no retry, SocketRefusedError on error and close (redacted), one warning, run() completes by polling`, async () => {
      const { c, log, warnings } = client(emu.url, EMULATOR_API_KEY);
      const wf = invertWorkflow(await input(c), `refused${code}`);
      emu.cloud.closeSocketsOnOpen({ code, reason: `Invalid token ${EMULATOR_API_KEY}` });
      const socket = c.connect();
      const opened = opens(socket);
      const errors: unknown[] = [];
      socket.on('error', (e) => void errors.push(e.error));
      const closed = socket.once('close');
      const result = await c.run(wf, { pollInterval: 20 });
      expect(result.status).toBe('completed');
      const event = await closed;
      expect(event).toMatchObject({ code, reason: 'Invalid token [REDACTED]' });
      expect(event.error).toBeInstanceOf(SocketRefusedError);
      expect(event.error).toMatchObject({ code, reason: 'Invalid token [REDACTED]' });
      expect(errors).toEqual([event.error]);
      expect(socket.state).toBe('closed');
      await sleep(100);
      expect(opened()).toBe(1);
      expect(warnings()).toEqual([expect.stringContaining(`The server refused the WebSocket (close code ${code}: Invalid token [REDACTED]); not reconnecting`)]);
      expect(JSON.stringify(log.lines)).not.toContain(EMULATOR_API_KEY);
    });
  }

  it("the socket's own idle drop (code 4000, echoed by the server) is not taken for one", async () => {
    const { c, warnings } = client(emu.url, EMULATOR_API_KEY);
    const socket = c.connect({ idleTimeout: 50, reconnect: { baseDelay: 5, maxDelay: 10 } });
    await socket.ready();
    const off = socket.subscribe('a-job-being-followed', () => undefined); // arms the watchdog
    const codes: Array<number | undefined> = [];
    const errors: unknown[] = [];
    socket.on('reconnecting', (e) => void codes.push(e.code));
    socket.on('error', (e) => void errors.push(e.error));
    emu.cloud.silenceSockets(200);
    await socket.once('reconnecting');
    await until(() => socket.state === 'open' && Date.now() > emu.cloud.socketFaults.silentUntil, 5000, 'the socket back after the silence');
    off();
    expect(codes.length).toBeGreaterThanOrEqual(1);
    expect(new Set(codes)).toEqual(new Set([4000]));
    expect(errors).toEqual([]);
    expect(warnings().every((w) => !w.includes('refused'))).toBe(true);
  });
});

describe('an idle socket and the events of jobs nobody claims', () => {
  /** The 20 messages of one job (a workflow of 20 nodes) of another client of the account, as a local server sends them. */
  function foreignJob(id: string): string[] {
    const nodes = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [String(i + 1), { value: 1, max: 1, state: 'finished', node_id: String(i + 1), prompt_id: id, display_node_id: String(i + 1), parent_node_id: null, real_node_id: String(i + 1) }]),
    );
    const out = [
      { type: 'execution_start', data: { prompt_id: id, timestamp: 1795324115016 } },
      { type: 'execution_cached', data: { nodes: [], prompt_id: id, timestamp: 1795324115017 } },
    ];
    for (let n = 1; n <= 5; n++) {
      out.push({ type: 'executing', data: { node: String(n), display_node: String(n), prompt_id: id } } as never);
      out.push({ type: 'progress', data: { value: n, max: 5, prompt_id: id, node: String(n) } } as never);
      out.push({ type: 'progress_state', data: { prompt_id: id, nodes } } as never);
    }
    out.push({ type: 'executed', data: { node: '9', display_node: '9', output: { images: [{ filename: `${id}_00001_.png`, subfolder: '', type: 'output' }] }, prompt_id: id } } as never);
    out.push({ type: 'execution_success', data: { prompt_id: id, timestamp: 1795324115900 } });
    out.push({ type: 'executing', data: { node: null, prompt_id: id } } as never);
    return out.map((m) => JSON.stringify(m));
  }

  /** Sends `jobs` foreign jobs to every connected socket and waits until `socket` has received them. */
  async function flood(server: Awaited<ReturnType<typeof wsServer>>, socket: CloudSocket, prefix: string, jobs: number): Promise<void> {
    let received = 0;
    const off = socket.on('message', () => void received++);
    for (let j = 0; j < jobs; j++) for (const text of foreignJob(`${prefix}-${j}-0000-4000-8000-000000000000`)) for (const ws of server.wss.clients) ws.send(text);
    await until(() => received === jobs * 20, 20_000, 'every message received');
    off();
  }

  it('1,000 foreign jobs of 20 messages each grow the heap by under 2 MiB; the held text stays under 1 MiB', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      gc();
      return getHeapStatistics().used_heap_size;
    };
    const server = await wsServer(() => undefined);
    const { c } = client(server.url);
    const socket = c.connect();
    await socket.ready();
    // Warm-up: the same paths once (parse, hold, replay), with jobs claimed at once.
    await flood(server, socket, 'warm', 50);
    for (let j = 0; j < 50; j++) socket.subscribe(`warm-${j}-0000-4000-8000-000000000000`, () => undefined)();
    const before = heap();

    await flood(server, socket, 'foreign', 1000);
    expect(socket.held.bytes).toBeLessThanOrEqual(1024 * 1024);
    const flooded = heap() - before;
    // Idle from here: nothing more arrives, and the hold is released on time all the same.
    await until(() => socket.held.jobs === 0, 10_000, 'the held events released');
    const idle = heap() - before;
    expect(flooded, 'heap growth with the socket full').toBeLessThan(2 * 1024 * 1024);
    expect(idle, 'heap growth once idle').toBeLessThan(2 * 1024 * 1024);
    expect(socket.state).toBe('open');
  }, 30_000);
});
