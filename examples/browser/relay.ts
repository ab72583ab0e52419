// A relay between the example page and the cloud: it holds the API key, so the page never does.
//   PLATFORMUI_API_KEY=… PLATFORMUI_CLOUD_URL=https://… PAGE_ORIGIN=http://127.0.0.1:5173 \
//     node --experimental-strip-types examples/browser/relay.ts        (Node 22.18 or later)
// then open the page with ?server=http://127.0.0.1:8190&relay (see README.md).
//
// Whatever reaches it spends your credits with your key, so it forwards only
//  - requests from the page's origin(s): any other page its user visits could send work here
//    (a text/plain POST needs no preflight) or read the account's events on /ws (no CORS there);
//  - the routes the page uses, matched on a path already in normal form: that path is the one forwarded;
//  - JSON bodies on JSON routes, multipart on the upload.
// Put your own users' authentication in front of it too.
import { STATUS_CODES, createServer, type IncomingMessage, type Server } from 'node:http';
import { WebSocket, WebSocketServer, type RawData } from 'ws';

/** What a route's body must be (else 415). `none`: no body is forwarded. */
type Body = 'none' | 'json' | 'multipart';

// Exactly what the page calls through `new CloudClient({ server: 'cloud', keyless: true })`; `WS` is the
// socket's upgrade. Never /api/interrupt: on the cloud it stops every running job of the account (Cancel
// stops one job: POST /api/queue { delete: [id] }, or its own cancel route where the server has one).
const ROUTES = ([
  ['GET', '/api/object_info'],
  ['POST', '/api/upload/image', 'multipart'],
  ['POST', '/api/prompt', 'json'],
  ['GET', '/api/job/:id/status'],
  ['GET', '/api/jobs/:id'],
  ['GET', '/api/jobs'],
  ['GET', '/api/queue'],
  ['POST', '/api/queue', 'json'],
  ['POST', '/api/jobs/:id/cancel'],
  ['GET', '/api/view'],
  ['WS', '/ws'],
] as const).map(([method, path, body = 'none']) => ({
  method,
  // Job ids are UUIDs (the SDK's default): letters, digits, `_` and `-`; no dot, no percent sign.
  path: new RegExp(`^${path.replace(':id', '[\\w-]+')}$`),
  body: body as Body,
}));

/** A refusal (status and reason, nothing sent to the cloud) or what to forward. */
export type Verdict = { status: 403 | 404 | 415; reason: string } | { path: string; search: string; body: Body };

/** Whether the relay forwards `req`, from its method, target and headers (the body: {@link bodyProblem}). */
export function admit(req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>, origins: readonly string[]): Verdict {
  const { origin = '(none)', upgrade, 'content-type': type = '' } = req.headers;
  // A browser sends Origin on every cross-origin request and every WebSocket, so this is the page's own
  // check; a request without one is no page of yours (curl: add -H 'Origin: …').
  if (!origins.includes(origin)) return { status: 403, reason: `origin ${origin} is not allowed` };
  // fetch() and the cloud resolve `.` and `..` segments (`%2e` too) and backslashes: a path that is not
  // already in that normal form would be checked as one path and forwarded as another.
  const target = req.url ?? '';
  const url = new URL(target, 'http://relay.invalid');
  if (url.pathname !== target.split('?')[0]) return { status: 404, reason: 'the path is not in normal form' };
  const method = upgrade?.toLowerCase() === 'websocket' ? 'WS' : req.method;
  const route = ROUTES.find((r) => r.method === method && r.path.test(url.pathname));
  if (!route) return { status: 404, reason: `${method} ${url.pathname} is not relayed` };
  // A cross-site form or a no-preflight fetch can only send text/plain, form-urlencoded or multipart.
  const want = { none: '', json: 'application/json', multipart: 'multipart/form-data' }[route.body];
  if (want && type.split(';')[0]!.trim().toLowerCase() !== want) return { status: 415, reason: `${url.pathname} takes ${want}` };
  return { path: url.pathname, search: url.search, body: route.body };
}

/** Why a JSON body is refused (400), or `undefined`. */
export function bodyProblem(path: string, text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'the body is not JSON';
  }
  // The queue's `clear` would empty the account's whole queue: only `delete` of listed jobs goes through.
  const { delete: ids, ...rest } = (json ?? {}) as { delete?: unknown };
  if (path === '/api/queue' && !(Array.isArray(ids) && ids.every((id) => typeof id === 'string') && !Object.keys(rest).length)) {
    return 'POST /api/queue takes { "delete": [job ids] } only';
  }
  return undefined;
}

/** The relay's server, not listening yet: pages of `origins` (`http://host:port`) reach `cloud` with `key`. */
export function createRelay({ cloud, key, origins }: { cloud: URL; key: string; origins: readonly string[] }): Server {
  const server = createServer(async (req, res) => {
    const origin = req.headers.origin ?? '';
    const allowed = origins.includes(origin);
    const cors = allowed ? { 'access-control-allow-origin': origin, vary: 'origin' } : { vary: 'origin' };
    const refuse = (status: number, reason: string) => void res.writeHead(status, { ...cors, 'content-type': 'text/plain' }).end(`relay: ${reason}`);
    if (req.method === 'OPTIONS' && allowed) {
      return void res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'content-type' }).end();
    }
    const verdict = admit(req, origins); // a preflight of another origin: 403
    if ('status' in verdict) return refuse(verdict.status, verdict.reason);
    const headers: Record<string, string> = { 'x-api-key': key }; // whatever credential the page sent is dropped
    let body: Buffer<ArrayBuffer> | undefined;
    if (verdict.body !== 'none') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      body = Buffer.concat(chunks);
      const problem = verdict.body === 'json' ? bodyProblem(verdict.path, body.toString('utf8')) : undefined;
      if (problem) return refuse(400, problem);
      headers['content-type'] = req.headers['content-type']!;
    }
    try {
      // The checked path, on the cloud's origin: never a URL resolved from what the page sent.
      let answer = await fetch(new URL(verdict.path + verdict.search, cloud.origin), { method: req.method, headers, body, redirect: 'manual' });
      // /api/view answers a redirect to a signed URL: fetched here, WITHOUT the key, and streamed to the page.
      const location = answer.status >= 300 && answer.status < 400 ? answer.headers.get('location') : null;
      if (location) answer = await fetch(new URL(location, cloud));
      res.writeHead(answer.status, { ...cors, 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    } catch (err) {
      refuse(502, String(err));
    }
  });

  // The socket: the page opens ws://relay/ws?clientId=…; the relay opens the cloud's with the key.
  // Browsers apply no CORS to WebSockets: refusing the upgrade is what keeps other pages out.
  const sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy()); // a page that goes away mid-handshake is no crash
    const verdict = admit(req, origins);
    const status = 'status' in verdict ? verdict.status : verdict.path === '/ws' ? 0 : 404;
    if (status) return void socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    sockets.handleUpgrade(req, socket, head, (page) => {
      const target = new URL('/ws', cloud);
      target.protocol = cloud.protocol === 'https:' ? 'wss:' : 'ws:';
      target.searchParams.set('clientId', new URL(req.url ?? '/', 'http://x').searchParams.get('clientId') ?? '');
      target.searchParams.set('token', key);
      const upstream = new WebSocket(target);
      upstream.on('message', (data, isBinary) => page.send(data, { binary: isBinary }));
      // The page's first message (its feature flags) can come before the cloud's socket is open.
      const early: Array<[RawData, boolean]> = [];
      page.on('message', (data, isBinary) => (upstream.readyState === WebSocket.OPEN ? upstream.send(data, { binary: isBinary }) : early.push([data, isBinary])));
      upstream.on('open', () => early.splice(0).forEach(([data, isBinary]) => upstream.send(data, { binary: isBinary })));
      // The cloud's close code goes on to the page: a refused token (1008, 4xxx) must stop its reconnects too.
      upstream.on('close', (code, reason) => page.close(code === 1000 || code === 1008 || (code >= 3000 && code <= 4999) ? code : 1000, reason));
      upstream.on('error', () => page.terminate());
      page.on('close', () => upstream.close());
      page.on('error', () => page.terminate());
    });
  });
  return server;
}

if (import.meta.main) {
  const key = process.env.PLATFORMUI_API_KEY ?? '';
  if (!key) throw new Error('PLATFORMUI_API_KEY is not set');
  const cloud = new URL(process.env.PLATFORMUI_CLOUD_URL ?? 'https://cloud.example.com');
  // The page's origin(s), comma-separated; by default where `vite` serves the example.
  const origins = (process.env.PAGE_ORIGIN ?? 'http://127.0.0.1:5173').split(',').map((o) => new URL(o.trim()).origin);
  const port = Number(process.env.PORT ?? 8190);
  createRelay({ cloud, key, origins }).listen(port, '127.0.0.1', () => console.log(`relay for ${cloud.origin} on http://127.0.0.1:${port}, pages of ${origins.join(', ')}`));
}
