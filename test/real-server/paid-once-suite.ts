// Issue 23 against the real local server: a submission whose answer is lost is
// found by its chosen id and followed, never sent twice. Imported by
// local-server.int.test.ts, so its jobs never run beside that suite's on the one server.
//
// Between the client and the server sits a relay of the test's own that can lose
// the answer of POST /prompt (the server took the job) or the request itself.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIConnectionError, CloudClient } from '../../src/index.ts';
import { blurChain } from './workflows.ts';

const url = process.env.PLATFORMUI_REAL_SERVER_URL;

const isSubmission = (req: IncomingMessage) => req.method === 'POST' && /^\/(api\/)?prompt$/.test((req.url ?? '').split('?')[0]!);

/** A relay to `target` that forwards everything, WebSocket included, and loses what `lose` says of the next submission. */
async function relayTo(target: string) {
  const upstream = new URL(target);
  const state = { lose: 'nothing' as 'nothing' | 'answer' | 'request', forwarded: [] as string[] };
  const server: Server = createServer((req, res) => {
    const submission = isSubmission(req);
    const lose = submission ? state.lose : 'nothing';
    if (submission) state.lose = 'nothing';
    if (lose === 'request') {
      req.resume();
      req.once('end', () => req.socket.destroy());
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => {
      const body = Buffer.concat(chunks);
      if (submission) state.forwarded.push(String(JSON.parse(body.toString('utf8')).prompt_id));
      const up = httpRequest(new URL(req.url ?? '/', upstream), { method: req.method, headers: { ...req.headers, host: upstream.host } }, (r) => {
        // The server has taken the job; the client never hears so.
        if (lose === 'answer') return void (r.resume(), res.socket?.destroy());
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  server.on('upgrade', (req, socket, head) => {
    const up = connect(Number(upstream.port), upstream.hostname, () => {
      const headers = Object.entries(req.headers).map(([k, v]) => `${k === 'host' ? 'Host' : k}: ${k === 'host' ? upstream.host : String(v)}`);
      up.write(`${req.method} ${req.url} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`);
      up.write(head);
      socket.pipe(up).pipe(socket);
    });
    const end = () => (socket.destroy(), up.destroy());
    up.on('error', end);
    socket.on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe.skipIf(!url)('a real local server: paid work runs at most once', () => {
  let relay: Awaited<ReturnType<typeof relayTo>>;
  const clients: CloudClient[] = [];
  const direct = () => {
    const c = new CloudClient({ baseUrl: url!, logLevel: 'off' });
    clients.push(c);
    return c;
  };
  const source = () => ({ class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: Math.floor(Math.random() * 0xffffff) } });
  beforeAll(async () => {
    relay = await relayTo(url!);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await relay.close();
  });

  it('uses the id the client chose', async () => {
    const id = crypto.randomUUID();
    const { prompt_id } = await direct().submit(blurChain(1, 'chosen', source()), { promptId: id });
    expect(prompt_id).toBe(id);
    await direct().waitForJob(id, { pollInterval: 100 });
  });

  it('an answer cut on the way back: run() finds the job by its id and follows it to its outputs, sent once', async () => {
    const c = new CloudClient({ baseUrl: relay.url, logLevel: 'off' });
    clients.push(c);
    relay.state.lose = 'answer';
    relay.state.forwarded.length = 0;
    const result = await c.run(blurChain(2, 'cut-answer', source()), { confirmWithin: 10_000 });
    expect(result.files.length).toBeGreaterThan(0);
    expect(relay.state.forwarded).toEqual([result.promptId]);
    // The server has this job once, under the id the client chose.
    const record = await direct().getJob(result.promptId);
    expect(record.phase).toBe('completed');
  });

  it('a request lost on the way: run() rejects naming the job, and never creates a second one', async () => {
    const c = new CloudClient({ baseUrl: relay.url, logLevel: 'off' });
    clients.push(c);
    relay.state.lose = 'request';
    relay.state.forwarded.length = 0;
    const err: any = await c.run(blurChain(1, 'lost-request', source()), { confirmWithin: 1500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err.sent).toBe('maybe');
    expect(relay.state.forwarded).toEqual([]);
    await expect(direct().getJob(err.promptId)).rejects.toMatchObject({ status: 404 });
  });
});
