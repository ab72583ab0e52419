/**
 * Node implementation of {@link Platform}. Node modules are imported lazily so
 * that importing the SDK stays cheap and `ws`/`form-data` load only when used.
 *
 * @module
 */
import { APIUserAbortError, InvalidArgumentError, PlatformUIError } from '../errors.ts';
import type { MultipartBody, Platform, WebSocketConstructor } from './types.ts';

/** What a file-system error code means, in words. */
const FS_REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EMFILE: 'too many open files',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  ENAMETOOLONG: 'the name is too long',
};

function fsReason(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return `${FS_REASONS[code] ?? 'file system error'} (${code})`;
  return err instanceof Error ? err.message : String(err);
}

export const platform: Platform = {
  node: true,

  async fileBlob(path) {
    const fs = await import('node:fs');
    // openAsBlob says only "Unable to open file as blob"; stat first to say why.
    let stats: import('node:fs').Stats;
    try {
      stats = await fs.promises.stat(path);
    } catch (err) {
      throw new InvalidArgumentError(`cannot read ${JSON.stringify(path)}: ${fsReason(err)}`, 'file', undefined, { cause: err });
    }
    if (!stats.isFile()) throw new InvalidArgumentError(`cannot read ${JSON.stringify(path)}: ${stats.isDirectory() ? 'it is a directory' : 'not a regular file'}`, 'file');
    try {
      return await fs.openAsBlob(path);
    } catch (err) {
      throw new InvalidArgumentError(`cannot read ${JSON.stringify(path)}: ${fsReason(err)}`, 'file', undefined, { cause: err });
    }
  },

  async *readChunks(path, chunkSize = 1 << 20, signal) {
    if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) throw new InvalidArgumentError(`must be a positive integer, got ${String(chunkSize)}`, 'chunkSize');
    const fs = await import('node:fs/promises');
    const cannot = (err: unknown) => new InvalidArgumentError(`cannot read ${JSON.stringify(path)}: ${fsReason(err)}`, 'file', undefined, { cause: err });
    // Stat before opening: opening a FIFO would block, and a directory opens fine on Linux, then fails to read.
    let stats: import('node:fs').Stats;
    try {
      stats = await fs.stat(path);
    } catch (err) {
      throw cannot(err);
    }
    if (!stats.isFile()) throw new InvalidArgumentError(`cannot read ${JSON.stringify(path)}: ${stats.isDirectory() ? 'it is a directory' : 'not a regular file'}`, 'file');
    let handle: import('node:fs/promises').FileHandle;
    try {
      handle = await fs.open(path, 'r');
    } catch (err) {
      throw cannot(err);
    }
    // One buffer for the whole file: libuv reads straight into it, nothing is allocated per chunk.
    const buffer = new Uint8Array(chunkSize);
    let position = 0;
    try {
      for (;;) {
        if (signal?.aborted) throw new APIUserAbortError(undefined, { cause: signal.reason });
        let bytesRead: number;
        try {
          ({ bytesRead } = await handle.read(buffer, 0, chunkSize, position));
        } catch (err) {
          throw new PlatformUIError(`Reading ${JSON.stringify(path)} failed after ${position} bytes: ${fsReason(err)}`, { cause: err });
        }
        if (bytesRead === 0) return;
        position += bytesRead;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  },

  isNodeReadable(value) {
    const v = value as { pipe?: unknown; on?: unknown; read?: unknown } | null;
    return v !== null && typeof v === 'object' && typeof v.pipe === 'function' && typeof v.on === 'function' && typeof v.read === 'function';
  },

  async streamMultipart(fields, fileField, stream, filename): Promise<MultipartBody> {
    const [{ default: FormData }, { PassThrough, Readable }] = await Promise.all([import('form-data'), import('node:stream')]);
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const source = stream instanceof ReadableStream ? Readable.fromWeb(stream as import('node:stream/web').ReadableStream) : (stream as NodeJS.ReadableStream);
    form.append(fileField, source, { filename, contentType: 'application/octet-stream' });
    // form-data is an old-style stream; fetch wants a web stream.
    const out = new PassThrough();
    form.on('error', (e: Error) => out.destroy(e));
    form.pipe(out);
    return { body: Readable.toWeb(out) as ReadableStream<Uint8Array>, headers: form.getHeaders() as Record<string, string> };
  },

  async webSocket(): Promise<WebSocketConstructor> {
    if (typeof globalThis.WebSocket === 'function') return globalThis.WebSocket;
    const { WebSocket } = await import('ws');
    return WebSocket as unknown as WebSocketConstructor;
  },

  uploadFetch: (input, init) => nodeHttpFetch(input instanceof Request ? input : new Request(input, init)),

  async saveToFile(body, path) {
    const [{ createWriteStream }, { Readable }, { pipeline }] = await Promise.all([
      import('node:fs'),
      import('node:stream'),
      import('node:stream/promises'),
    ]);
    let bytes = 0;
    const counted = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
    counted.on('data', (c: Uint8Array) => (bytes += c.byteLength));
    const file = createWriteStream(path);
    let opened = false;
    file.once('open', () => (opened = true));
    try {
      await pipeline(counted, file);
    } catch (err) {
      if (err instanceof PlatformUIError) throw err;
      const fsError = typeof (err as { syscall?: unknown } | null)?.syscall === 'string';
      // Not opened: the path is at fault (no such directory, no permission), before anything was written.
      if (!opened && fsError) throw new InvalidArgumentError(`cannot write ${JSON.stringify(path)}: ${fsReason(err)}`, 'destination', undefined, { cause: err });
      throw new PlatformUIError(`Download to ${JSON.stringify(path)} failed after ${bytes} bytes: ${fsError ? fsReason(err) : err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return bytes;
  },
};

/**
 * The part of `fetch` the uploads need, over node:http: the request body is
 * piped with backpressure, the response comes back as a standard `Response`.
 */
async function nodeHttpFetch(request: Request): Promise<Response> {
  const [http, https, { Readable }, { pipeline }] = await Promise.all([
    import('node:http'),
    import('node:https'),
    import('node:stream'),
    import('node:stream/promises'),
  ]);
  const signal = request.signal;
  signal.throwIfAborted();
  return new Promise<Response>((resolve, reject) => {
    // Through the module object, not the ESM binding: instrumentation (APM, msw) patches that one.
    const send = request.url.startsWith('https:') ? https.default.request : http.default.request;
    const req = send(request.url, { method: request.method, headers: Object.fromEntries(request.headers), signal });
    req.once('error', reject);
    req.once('response', (res: import('node:http').IncomingMessage) => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const one of [v].flat()) headers.append(k, one);
      const nullBody = res.statusCode === 204 || res.statusCode === 304 || request.method === 'HEAD';
      if (nullBody) res.resume();
      resolve(new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers }));
    });
    if (request.body) pipeline(Readable.fromWeb(request.body as import('node:stream/web').ReadableStream), req).catch(reject);
    else req.end();
  });
}
