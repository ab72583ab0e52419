// Transfers over real loopback sockets, against small servers of the test's own:
// bodies that stop flowing (issue 23, item 6), connection failures on both
// HTTP paths (item 7), and the caller's own headers on a keyless client (item 3).
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIConnectionError, APITimeoutError, APIUserAbortError, CloudClient, ProxyClient } from '../../src/index.ts';
import { downloadAll } from '../../src/cli/download.ts';
import { recorder } from '../helpers/log-recorder.ts';

// Short enough to keep the suite quick; each test's own timeout shows a hang (the code before issue 23 hung here).
const IDLE = 300;
const HANG = { timeout: 5000 };
const PART = Buffer.alloc(1000, 7);
const BIG = 8 * 1024 * 1024;

let server: Server;
let base: string;
const sockets = new Set<Socket>();
const headersSeen: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
let dir: string;

/** Headers and the first part of a body, then nothing, with the connection left open. */
const stall = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(PART.length * 4) });
  res.write(PART);
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    headersSeen.push({ path: url.pathname, headers: req.headers });
    const file = url.searchParams.get('filename');
    if (url.pathname === '/api/view' && file === 'signed.png') {
      res.writeHead(302, { location: `${base}/signed/abc?X-Amz-Signature=s3cr3t` }).end();
    } else if (url.pathname === '/api/view' && file === 'cut.png') {
      res.writeHead(200, { 'content-length': String(PART.length * 4) });
      res.write(PART, () => res.destroy());
    } else if (url.pathname === '/api/view' && file === 'big.png') {
      // Everything at once: only the client's reading holds it back.
      res.writeHead(200, { 'content-length': String(BIG) });
      res.end(Buffer.alloc(BIG, 1));
    } else if (url.pathname === '/api/view' && file === 'trickle.png') {
      // Flowing, slower than the timeout in total, never idle for long: one chunk every IDLE / 4 ms.
      res.writeHead(200, { 'content-length': String(PART.length * 12) });
      let n = 0;
      const timer = setInterval(() => {
        res.write(PART);
        if (++n === 12) {
          clearInterval(timer);
          res.end();
        }
      }, IDLE / 4);
    } else if (url.pathname === '/api/view' || url.pathname.startsWith('/signed/') || url.pathname === '/result.png') {
      stall(res);
    } else if (url.pathname === '/api/object_info') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else {
      res.writeHead(404).end();
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'transfers-'));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const local = (o: Partial<ConstructorParameters<typeof CloudClient>[0]> = {}) => new CloudClient({ baseUrl: base, server: 'local', timeout: IDLE, ...o });
const ref = (filename: string) => ({ filename, subfolder: '', type: 'output' as const });

describe('a body that stops flowing', () => {
  it('download() rejects with APITimeoutError, whether /api/view answers itself or redirects to a signed URL', HANG, async () => {
    const log = recorder();
    const cloud = local({ logger: log.logger, logLevel: 'debug' });
    for (const file of ['direct.png', 'signed.png']) {
      const res = await cloud.download(ref(file));
      const err = await res.arrayBuffer().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APITimeoutError);
      expect((err as APITimeoutError).timeout).toBe(IDLE);
      expect((err as APITimeoutError).sent).toBe('maybe');
    }
    // Said at debug, with the signed URL's capability redacted.
    const failed = log.of('debug').filter((l) => /failed: .*Timed out/.test(l.message));
    expect(failed).toHaveLength(2);
    expect(failed[1]!.message).toContain('/signed/abc');
    expect(JSON.stringify(log.lines)).not.toContain('s3cr3t');
  });

  it('downloadToFile() and the CLI\'s --out reject with APITimeoutError and leave no partial file', HANG, async () => {
    const cloud = local();
    await expect(cloud.downloadToFile(ref('signed.png'), join(dir, 'one.png'))).rejects.toBeInstanceOf(APITimeoutError);
    const out = join(dir, 'out');
    await expect(downloadAll(cloud, [ref('direct.png')], out)).rejects.toBeInstanceOf(APITimeoutError);
    expect(readdirSync(out)).toEqual([]);
  });

  it('downloadResult() and downloadResultToFile() reject with APITimeoutError', HANG, async () => {
    const proxy = new ProxyClient({ baseUrl: base, token: 't', timeout: IDLE });
    const res = await proxy.downloadResult(`${base}/result.png`);
    await expect(res.arrayBuffer()).rejects.toBeInstanceOf(APITimeoutError);
    await expect(proxy.downloadResultToFile(`${base}/result.png`, join(dir, 'result.png'), { timeout: IDLE })).rejects.toBeInstanceOf(APITimeoutError);
  });

  it('a per-call timeout wins over the client\'s', HANG, async () => {
    const res = await local({ timeout: 60_000 }).download(ref('direct.png'), { timeout: IDLE });
    const err = await res.text().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APITimeoutError);
    expect((err as APITimeoutError).timeout).toBe(IDLE);
  });

  it('the caller\'s signal ends a stalled body with APIUserAbortError', HANG, async () => {
    const ac = new AbortController();
    const res = await local({ timeout: false }).download(ref('direct.png'), { signal: ac.signal });
    const reading = res.arrayBuffer();
    setTimeout(() => ac.abort(new Error('enough')), 20);
    const err = await reading.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect((err as Error).cause).toEqual(new Error('enough'));
  });

  it('a connection cut mid-body is an APIConnectionError', HANG, async () => {
    const res = await local().download(ref('cut.png'));
    await expect(res.arrayBuffer()).rejects.toBeInstanceOf(APIConnectionError);
  });

  it('a body that keeps flowing is read whole, however long it takes in total', HANG, async () => {
    const res = await local().download(ref('trickle.png'));
    expect((await res.arrayBuffer()).byteLength).toBe(PART.length * 12);
  });

  it('a reader slower than the timeout is not taken for a stalled server', HANG, async () => {
    const res = await local().download(ref('big.png'));
    let bytes = 0;
    let pauses = 0;
    // Pauses longer than the timeout while the server's bytes wait in the socket buffers.
    for await (const chunk of res.body!) {
      bytes += chunk.byteLength;
      if (pauses < 2 && bytes > (pauses + 1) * 1024 * 1024) {
        pauses++;
        await new Promise((r) => setTimeout(r, IDLE * 2));
      }
    }
    expect(bytes).toBe(BIG);
    expect(pauses).toBe(2);
  });

  it('an afterResponse hook that does not read its clone neither holds the body nor hangs the redirect', HANG, async () => {
    const statuses: number[] = [];
    const cloud = local({ hooks: { afterResponse: [({ response }) => void statuses.push(response.status)] } });
    const res = await cloud.download(ref('signed.png'));
    expect(statuses).toEqual([302]);
    expect(res.status).toBe(200);
    await res.body!.cancel();
    const big = await cloud.download(ref('big.png'));
    expect((await big.arrayBuffer()).byteLength).toBe(BIG);
  });

  it('keeps what the response says of itself: status, headers, url', HANG, async () => {
    const res = await local().download(ref('signed.png'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.url).toContain('/signed/abc');
    expect(res.redirected).toBe(false);
    await res.body!.cancel();
  });
});

describe('connection failures, whichever HTTP path carried the request', () => {
  it('a refused upload is APIConnectionError ECONNREFUSED, sent: no, from fetch (a Blob) and node:http (a Node stream)', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const cloud = new CloudClient({ baseUrl: `http://127.0.0.1:${port}`, server: 'local', retry: false });
    const viaFetch = await cloud.uploadImage(new Blob([PART])).catch((e: unknown) => e);
    const viaNodeHttp = await cloud.uploadImage(Readable.from([PART])).catch((e: unknown) => e);
    for (const err of [viaFetch, viaNodeHttp]) {
      expect(err).toBeInstanceOf(APIConnectionError);
      expect(err).toMatchObject({ code: 'ECONNREFUSED', sent: 'no', method: 'POST' });
      expect((err as Error).message).toMatch(/^Connection failed \(ECONNREFUSED\): POST http:\/\/127\.0\.0\.1:\d+\/api\/upload\/image$/);
    }
  });
});

describe('a port fetch blocks', () => {
  it('is a submission never sent: no look-up of the job, sent: no', async () => {
    const cloud = new CloudClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', server: 'cloud', retry: false, logLevel: 'off' });
    const err = await cloud.submit({ 1: { class_type: 'EmptyImage', inputs: {} } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).toMatchObject({ sent: 'no', method: 'POST' });
    expect((err as Error).message).toMatch(/was not sent\)$/);
  });
});

describe("a keyless client's own headers", () => {
  it('reach its relay unchanged on authenticated endpoints', async () => {
    headersSeen.length = 0;
    const cloud = new CloudClient({ baseUrl: base, server: 'cloud', keyless: true, headers: { Authorization: 'Bearer relay-token', 'X-Api-Key': 'relay-key', 'X-Trace': 't1' } });
    await cloud.getObjectInfo();
    expect(headersSeen).toHaveLength(1);
    expect(headersSeen[0]!.headers).toMatchObject({ authorization: 'Bearer relay-token', 'x-api-key': 'relay-key', 'x-trace': 't1' });
  });

  it('a client with a key sends its own X-API-Key instead of the caller\'s, and the caller\'s Authorization as it is', async () => {
    headersSeen.length = 0;
    const cloud = new CloudClient({ baseUrl: base, server: 'cloud', apiKey: 'the-key', headers: { Authorization: 'Bearer relay-token', 'X-Api-Key': 'not-the-key' } });
    await cloud.getObjectInfo();
    expect(headersSeen[0]!.headers).toMatchObject({ authorization: 'Bearer relay-token', 'x-api-key': 'the-key' });
  });
});

