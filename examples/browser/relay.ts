// A relay between the example page and the cloud: it holds the API key, so the page never does.
//   PLATFORMUI_API_KEY=… PLATFORMUI_CLOUD_URL=https://… PAGE_ORIGIN=http://127.0.0.1:5173 \
//     node --experimental-strip-types examples/browser/relay.ts
// then open the page with ?server=http://127.0.0.1:8190&relay (see README.md). Guard it like any
// backend that spends your credits: put your own users' authentication in front of it.
import { createServer } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';

const cloud = new URL(process.env.PLATFORMUI_CLOUD_URL ?? 'https://cloud.example.com');
const key = process.env.PLATFORMUI_API_KEY ?? '';
if (!key) throw new Error('PLATFORMUI_API_KEY is not set');
const cors = { 'access-control-allow-origin': process.env.PAGE_ORIGIN ?? 'http://127.0.0.1:5173', 'access-control-allow-headers': 'content-type, x-api-key', vary: 'origin' };

const server = createServer(async (req, res) => {
  const path = req.url ?? '/';
  if (req.method === 'OPTIONS') return void res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, POST' }).end();
  // Never the cloud's /api/interrupt: it stops every running job of the account (the page stops its job with /api/queue).
  if (!path.startsWith('/api/') || path.startsWith('/api/interrupt')) return void res.writeHead(404, cors).end();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const headers: Record<string, string> = { 'x-api-key': key }; // whatever key the page sent is dropped
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
    let answer = await fetch(new URL(path, cloud), { method: req.method, headers, body, redirect: 'manual' });
    // /api/view answers a redirect to a signed URL: fetched here, WITHOUT the key, and streamed to the page.
    const location = answer.status >= 300 && answer.status < 400 ? answer.headers.get('location') : null;
    if (location) answer = await fetch(new URL(location, cloud));
    res.writeHead(answer.status, { ...cors, 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  } catch (err) {
    res.writeHead(502, cors).end(`relay: ${String(err)}`);
  }
});

// The socket: the page connects to ws://relay/ws?clientId=…; the relay to the cloud with the key.
new WebSocketServer({ server, path: '/ws' }).on('connection', (page, req) => {
  const target = new URL('/ws', cloud);
  target.protocol = cloud.protocol === 'https:' ? 'wss:' : 'ws:';
  target.searchParams.set('clientId', new URL(req.url ?? '/', 'http://x').searchParams.get('clientId') ?? '');
  target.searchParams.set('token', key);
  const upstream = new WebSocket(target);
  upstream.on('message', (data, isBinary) => page.send(data, { binary: isBinary }));
  upstream.on('close', () => page.close());
  upstream.on('error', () => page.terminate());
  page.on('close', () => upstream.close());
});
server.listen(Number(process.env.PORT ?? 8190), '127.0.0.1', () => console.log(`relay for ${cloud.origin} on http://127.0.0.1:${process.env.PORT ?? 8190}`));
