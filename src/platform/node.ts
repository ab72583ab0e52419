/**
 * Node implementation of {@link Platform}. Node modules are imported lazily so
 * that importing the SDK stays cheap and `ws`/`form-data` load only when used.
 *
 * @module
 */
import type { MultipartBody, Platform, WebSocketConstructor } from './types.ts';

export const platform: Platform = {
  node: true,

  async fileBlob(path) {
    const fs = await import('node:fs');
    return fs.openAsBlob(path);
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

  async saveToFile(body, path) {
    const [{ createWriteStream }, { Readable }, { pipeline }] = await Promise.all([
      import('node:fs'),
      import('node:stream'),
      import('node:stream/promises'),
    ]);
    let bytes = 0;
    const counted = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
    counted.on('data', (c: Uint8Array) => (bytes += c.byteLength));
    await pipeline(counted, createWriteStream(path));
    return bytes;
  },
};
