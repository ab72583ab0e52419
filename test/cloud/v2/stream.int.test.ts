// A Comfy API v2 job's event stream (src/cloud/v2/stream.ts) over real loopback sockets: a node:http
// server on 127.0.0.1:0 writes text/event-stream with frames cut across writes, pauses, CRLF,
// keepalives, drops, 429s and silence, and `open()` is plain fetch, as the transport's is.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { APIError } from '../../../src/errors.ts';
import { JobEventStream } from '../../../src/cloud/v2/stream.ts';
import type { BinaryEvent, SocketEvent } from '../../../src/cloud/socket.ts';
import { recorder } from '../../helpers/log-recorder.ts';
import { recordFiredTimers } from '../../helpers/timers-fired.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const servers: Server[] = [];
const streams: JobEventStream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  for (const s of servers.splice(0)) {
    const closed = new Promise((r) => s.close(r));
    // A stream the test left open must not hold the server's close.
    s.closeAllConnections();
    await closed;
  }
});

type Script = (req: IncomingMessage, res: ServerResponse, n: number) => void | Promise<void>;

/** A server whose every events request runs `script` (n: 1 for the first request); counts streams open now. */
async function serve(script: Script) {
  let n = 0;
  const stats = { requests: 0, open: 0, closedByClient: 0 };
  const server = createServer((req, res) => {
    stats.requests++;
    stats.open++;
    res.on('close', () => {
      stats.open--;
      if (!res.writableEnded) stats.closedByClient++;
    });
    void script(req, res, ++n);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, stats };
}

/** `open()` as the transport does it: the 200 with its body unread, or the SDK's APIError. */
const fetchOpen = (base: string) => async (id: string, signal: AbortSignal): Promise<Response> => {
  const url = `${base}/api/v2/jobs/${id}/events`;
  const res = await fetch(url, { signal, headers: { accept: 'text/event-stream' } });
  if (res.ok) return res;
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text
  }
  const err = new APIError({ status: res.status, method: 'GET', url, body, headers: res.headers });
  const code = (body as { error?: { code?: unknown } })?.error?.code;
  return Promise.reject(typeof code === 'string' ? Object.assign(err, { code }) : err);
};

const sse = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.flushHeaders();
};

function follow(base: string, init: { idleMs?: number } = {}) {
  const log = recorder();
  const stream = new JobEventStream({ open: fetchOpen(base), log: log.logger, random: () => 0, ...init });
  streams.push(stream);
  const events: SocketEvent[] = [];
  const seen: string[] = [];
  for (const k of ['open', 'reconnecting', 'close'] as const) stream.on(k, () => seen.push(k));
  let lost = 0;
  const off = stream.subscribe('job-1', (e) => events.push(e), { onLost: () => lost++ });
  const until = async (f: () => boolean, ms = 5000) => {
    const end = Date.now() + ms;
    while (!f()) {
      if (Date.now() > end) throw new Error(`timed out; seen ${JSON.stringify(seen)}, events ${events.map((e) => e.type).join(',')}`);
      await sleep(5);
    }
  };
  const names = () => events.map((e) => (e.type === 'unknown' ? e.rawType : e.type));
  return { stream, events, seen, log, off, until, names, lost: () => lost };
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('JobEventStream over a real HTTP server', () => {
  it('reads frames cut across writes with pauses, CRLF and keepalives; the output after the terminal status is delivered; no reconnect after the end', async () => {
    const b64 = Buffer.from(PNG).toString('base64');
    const { base, stats } = await serve(async (_req, res) => {
      sse(res);
      const pieces = [
        'event: sta', 'tus\r\ndata: {"status":', '"running"}\r', '\n\r\n',
        ': keepalive\n\n',
        `event: preview\ndata: {"node_id":"3","content_type":"image/png","data_base64":"${b64.slice(0, 5)}`, `${b64.slice(5)}"}\n`, '\n',
        'event: progress\ndata: {"value":1.0,"nodes_done":1,', '"nodes_total":2}\n\n',
        'event: status\ndata: {"status":"succeeded"}\n\n',
        'event: output\ndata: {"node_id":"9","name":"a.png","type":"image","url":"http://x/a.png"}\n\n',
      ];
      for (const p of pieces) {
        res.write(p);
        await sleep(15);
      }
      res.end();
    });
    const t = follow(base);
    await t.until(() => t.stream.phase === 'ended');
    expect(t.names()).toEqual(['execution_start', 'job_status', 'binary', 'progress', 'job_status', 'executed']);
    const preview = t.events[2] as BinaryEvent;
    expect(preview.frame).toMatchObject({ type: 'preview_image_with_metadata', mime: 'image/png', nodeId: '3', promptId: 'job-1' });
    expect([...(preview.frame as { image: Uint8Array }).image]).toEqual([...PNG]);
    expect(t.events[5]).toMatchObject({ type: 'executed', data: { node: '9', prompt_id: 'job-1', output: { images: [{ filename: 'a.png', url: 'http://x/a.png' }] } } });
    await sleep(600);
    expect(stats.requests).toBe(1);
    expect(t.seen).toEqual(['open', 'close']);
  });

  it('a connection dropped mid-job is reopened after the backoff; the job goes on; onLost once', async () => {
    // The SDK's timers that had fired when the stream was reopened: its backoff, by the delay it asked for.
    const timers = recordFiredTimers();
    let firedBeforeReopen: number[] = [];
    const { base, stats } = await serve(async (_req, res, n) => {
      if (n === 2) firedBeforeReopen = [...timers.fired];
      sse(res);
      if (n === 1) {
        res.write('event: status\ndata: {"status":"running"}\n\nevent: progress\ndata: {"value":1,"nodes_done":1,"nodes_total":2}\n\nevent: progress\ndata: {"val');
        await sleep(20);
        res.socket?.destroy();
        return;
      }
      res.write('event: status\ndata: {"status":"running"}\n\nevent: progress\ndata: {"value":1,"nodes_done":2,"nodes_total":2}\n\nevent: status\ndata: {"status":"succeeded"}\n\n');
      res.end();
    });
    const t = follow(base);
    await t.until(() => t.stream.phase === 'ended').finally(timers.restore);
    expect(stats.requests).toBe(2);
    // Attempt 1: half of 500 ms at the least, waited out before the reopen (the delays chosen, not a clock's reading).
    const waits = t.log.of('debug').filter((l) => /event stream reconnecting in/.test(l.message)).map((l) => l.details!.delayMs as number);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(250);
    expect(firedBeforeReopen).toContain(waits[0]);
    expect(t.names()).toEqual(['execution_start', 'job_status', 'progress', 'job_status', 'progress', 'job_status']);
    expect(t.lost()).toBe(1);
    expect(t.seen).toEqual(['open', 'reconnecting', 'open', 'close']);
  });

  it('429 too_many_streams with Retry-After: 1 → the next try a second later, not sooner', async () => {
    const timers = recordFiredTimers();
    let firedBeforeRetry: number[] = [];
    const { base, stats } = await serve((_req, res, n) => {
      if (n === 2) firedBeforeRetry = [...timers.fired];
      if (n === 1) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ error: { code: 'too_many_streams', message: 'Maximum concurrent event streams reached; poll GET /jobs/{id} instead.', details: null } }));
        return;
      }
      sse(res);
      res.end('event: status\ndata: {"status":"succeeded"}\n\n');
    });
    const t = follow(base);
    await t.until(() => t.stream.phase === 'ended').finally(timers.restore);
    expect(stats.requests).toBe(2);
    expect(t.log.of('debug').some((l) => /429 too_many_streams, Retry-After 1000 ms/.test(l.message))).toBe(true);
    // Not sooner: a wait of the second Retry-After asks for had fired before the next try (its delay, not a clock's reading).
    expect(firedBeforeRetry.filter((ms) => ms >= 1000)).toHaveLength(1);
  });

  it('a silent stream is let go after idleMs (the server sees it closed) and reopened', async () => {
    const { base, stats } = await serve((_req, res, n) => {
      sse(res);
      if (n === 2) res.end('event: status\ndata: {"status":"succeeded"}\n\n');
    });
    const t = follow(base, { idleMs: 200 });
    await t.until(() => t.stream.phase === 'ended');
    expect(stats.requests).toBe(2);
    await t.until(() => stats.open === 0);
    expect(stats.closedByClient).toBe(1);
  });

  it('keepalive comments keep a quiet stream open past idleMs', async () => {
    const { base, stats } = await serve(async (_req, res) => {
      sse(res);
      for (let i = 0; i < 6; i++) {
        await sleep(60);
        res.write(': keepalive\n\n');
      }
      res.end('event: status\ndata: {"status":"succeeded"}\n\n');
    });
    const t = follow(base, { idleMs: 150 });
    await t.until(() => t.stream.phase === 'ended');
    expect(stats.requests).toBe(1);
  });

  it('unsubscribing the last handler closes the connection: the server gets its stream slot back', async () => {
    const { base, stats } = await serve((_req, res) => {
      sse(res);
      res.write(': hi\n\n');
    });
    // At once both ways, told by the SDK's timers rather than a clock: none fired (no backoff before the open, no
    // idle timeout before the close).
    const timers = recordFiredTimers();
    const t = follow(base);
    await t.until(() => t.stream.state === 'open' && stats.open === 1);
    t.off();
    await t.until(() => stats.open === 0).finally(timers.restore);
    expect(timers.fired).toEqual([]);
    expect(stats.closedByClient).toBe(1);
    await sleep(300);
    expect(stats.requests).toBe(1);
  });

  it('501 not_implemented → closed for good after one request, one warning', async () => {
    const { base, stats } = await serve((_req, res) => {
      res.writeHead(501, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not_implemented', message: 'no streaming here' } }));
    });
    const t = follow(base);
    await t.until(() => t.stream.state === 'closed');
    await sleep(300);
    expect(stats.requests).toBe(1);
    expect(t.log.of('warn')).toHaveLength(1);
    expect(t.log.of('warn')[0]!.details).toMatchObject({ status: 501, code: 'not_implemented' });
  });
});
