/**
 * Inputs as content-addressed assets on a v2 server (`spec/cloud-v2.md` §4,
 * §9.1): a file is hashed on the client, and its bytes are sent only when the
 * server does not have them yet, so the same 10 MB input for a second run
 * sends 0 bytes.
 *
 * Part of the v2 chunk: loaded with `import()` by a client that names
 * `server: 'v2'`, never by `src/index.ts`'s static graph.
 *
 * @module
 */
import { InvalidArgumentError, NotFoundError, APIError } from '../../errors.ts';
import { platform } from '../../platform/node.ts';
import { path } from '../../transport/path.ts';
import type { Transport } from '../../transport/transport.ts';
import type { RequestOptions } from '../../transport/options.ts';
import type { WithResponse } from '../../transport/promise.ts';
import type { UploadInput } from '../client.ts';
import { blake3, isBlake3Hash, type Blake3Hash } from './hash.ts';
import type { AssetReference, V2Asset } from './wire.ts';

/** Options of {@link uploadAsset}. */
export interface UploadAssetOptions extends RequestOptions {
  /** The asset's `file_path` (its name in a workflow). Default: the path's base name, a File's name, else `upload.bin`. */
  filename?: string;
  /** The bytes' MIME type. Default: a Blob's `type`, else guessed from the name's extension, else `application/octet-stream`. */
  contentType?: string;
  /** Labels kept with the asset (the published spec; the real proxy accepts and drops them). */
  tags?: string[];
  /** Seconds the server keeps the asset, 60–604800 (the server's default when absent). */
  expiresIn?: number;
}

/** What {@link uploadAsset} resolves to: the asset, the response, and how many bytes of the file were sent. */
export type UploadedAsset = WithResponse<V2Asset> & {
  /** Bytes of the file sent in the request body: 0 when the server had them (`from-hash`). */
  bytesSent: number;
  /** How the asset was obtained: `from-hash` (no bytes sent) or `upload`. */
  via: 'from-hash' | 'upload';
};

/** A few common extensions: a v2 server records `content_type` as given, and a workflow's loaders read it. */
const TYPES: Readonly<Record<string, string>> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', bmp: 'image/bmp', tif: 'image/tiff', tiff: 'image/tiff',
  mp4: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime', wav: 'audio/wav', mp3: 'audio/mpeg', flac: 'audio/flac', ogg: 'audio/ogg',
  json: 'application/json', txt: 'text/plain', safetensors: 'application/octet-stream',
};

const baseName = (p: string) => p.split(/[\\/]/).pop() || 'upload.bin';

function guessType(name: string): string {
  const dot = name.lastIndexOf('.');
  return (dot >= 0 && TYPES[name.slice(dot + 1).toLowerCase()]) || 'application/octet-stream';
}

/** The options checked before any byte is read or sent, and the metadata they make. */
function checkUploadOptions(o: UploadAssetOptions): void {
  if (o.filename !== undefined && (typeof o.filename !== 'string' || o.filename === '')) throw new InvalidArgumentError('must be a non-empty string', 'filename');
  if (o.contentType !== undefined && (typeof o.contentType !== 'string' || o.contentType === '')) throw new InvalidArgumentError('must be a non-empty string', 'contentType');
  if (o.tags !== undefined && (!Array.isArray(o.tags) || o.tags.some((t) => typeof t !== 'string' || t === ''))) throw new InvalidArgumentError('must be an array of non-empty strings', 'tags');
  // The published range (§4): the server answers 422 outside it; refused here before hashing a large file for nothing.
  if (o.expiresIn !== undefined && (!Number.isInteger(o.expiresIn) || o.expiresIn < 60 || o.expiresIn > 604800)) throw new InvalidArgumentError('must be an integer number of seconds from 60 to 604800', 'expiresIn');
}

const isStream = (file: unknown): boolean => (typeof ReadableStream !== 'undefined' && file instanceof ReadableStream) || platform.isNodeReadable(file);

/**
 * A web stream over a web or Node stream that counts the bytes read from it:
 * what `bytesSent` reports for an input whose size is unknown. Built on the
 * Node stream's async iterator, not on node:stream, so this module stays
 * browser-safe.
 */
function counted(source: unknown, onBytes: (n: number) => void): ReadableStream<Uint8Array> {
  const iterator: AsyncIterator<unknown> =
    source instanceof ReadableStream ? readerIterator(source.getReader()) : (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await iterator.next();
      if (done) return controller.close();
      const chunk = typeof value === 'string' ? new TextEncoder().encode(value) : (value as Uint8Array);
      onBytes(chunk.byteLength);
      controller.enqueue(chunk);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}

function readerIterator(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncIterator<Uint8Array> {
  return {
    next: () => reader.read() as Promise<IteratorResult<Uint8Array>>,
    return: async (reason?: unknown) => {
      await reader.cancel(reason);
      return { done: true, value: undefined };
    },
  };
}

/** The metadata parts, in the order Cloud requires: all of them before `file` (§1, "Drift"). */
function metadata(filePath: string, contentType: string, hash: Blake3Hash | undefined, o: UploadAssetOptions): [string, string][] {
  const parts: [string, string][] = [['file_path', filePath], ['content_type', contentType]];
  if (hash) parts.push(['expected_hash', hash]);
  for (const tag of o.tags ?? []) parts.push(['tags', tag]);
  if (o.expiresIn !== undefined) parts.push(['expires_in', String(o.expiresIn)]);
  return parts;
}

const requestOptions = (o: UploadAssetOptions): RequestOptions => {
  const { signal, timeout, headers, retry } = o;
  return { ...(signal ? { signal } : {}), ...(timeout !== undefined ? { timeout } : {}), ...(headers ? { headers } : {}), ...(retry !== undefined ? { retry } : {}) };
};

/**
 * Whether the server holds bytes of this hash that the caller may reference
 * (`HEAD api/v2/assets/by-hash/{hash}`): 200 yes; 404 no (a miss and "not
 * yours" look the same, §4). A server without the route (405, 501) is
 * answered "no": the upload then sends the bytes, which is always correct.
 *
 * @example
 * ```ts
 * if (await hasAssetHash(transport, 'blake3:c5d6…')) console.log('no need to send the bytes');
 * ```
 */
export async function hasAssetHash(t: Transport, hash: Blake3Hash, options: RequestOptions = {}): Promise<boolean> {
  if (!isBlake3Hash(hash)) throw new InvalidArgumentError('must be "blake3:" and 64 lowercase hex digits', 'hash');
  try {
    // HEAD is not in RequestSpec's methods (the transport sends it as given; its body is empty, read as no data).
    await t.request<undefined>({ method: 'HEAD', path: path`api/v2/assets/by-hash/${hash}`, auth: true, options });
    return true;
  } catch (err) {
    if (err instanceof NotFoundError || (err instanceof APIError && (err.status === 405 || err.status === 501))) return false;
    throw err;
  }
}

/**
 * Uploads a file as a v2 asset, sending its bytes only when the server does
 * not have them. A path (Node), Blob, File, Uint8Array or ArrayBuffer is
 * hashed first (BLAKE3, streamed), then `HEAD by-hash`: on 200,
 * `POST from-hash` mints the reference and no byte of the file is sent; else a
 * streamed multipart `POST api/v2/assets` carries `expected_hash`, so bytes
 * changed between the hash and the send are refused (409 `hash_mismatch`,
 * a {@link ConflictError}) rather than stored under another hash. A stream
 * (ReadableStream, Node Readable) can be read only once: it is sent without
 * hashing, and without `expected_hash`.
 *
 * Metadata parts go before the `file` part: Cloud answers 422 otherwise.
 *
 * @throws {@link InvalidArgumentError} for a bad option or input (before any request).
 * @throws {@link ConflictError} (409 `hash_mismatch`): the bytes sent are not those hashed.
 *
 * @example
 * ```ts
 * const first = await uploadAsset(transport, './photo.png');   // bytesSent: 842, via: 'upload'
 * const again = await uploadAsset(transport, './photo.png');   // bytesSent: 0, via: 'from-hash'
 * workflow['10'].inputs.image = assetReference(again.data);
 * ```
 */
export async function uploadAsset(t: Transport, file: UploadInput, options: UploadAssetOptions = {}): Promise<UploadedAsset> {
  checkUploadOptions(options);
  const opts = requestOptions(options);
  if (isStream(file)) {
    const filePath = options.filename ?? 'upload.bin';
    let sent = 0;
    const fields = Object.fromEntries(metadata(filePath, options.contentType ?? guessType(filePath), undefined, options));
    const { body, headers } = await platform.streamMultipart(fields, 'file', counted(file, (n) => (sent += n)), baseName(filePath));
    const r = await t.request<V2Asset>({ method: 'POST', path: 'api/v2/assets', body, headers, auth: true, options: opts, fetch: platform.uploadFetch });
    return { ...r, bytesSent: sent, via: 'upload' };
  }
  let blob: Blob;
  let name: string | undefined;
  let hashed: { hash: Blake3Hash; size: number };
  if (typeof file === 'string') {
    blob = await platform.fileBlob(file);
    name = baseName(file);
    hashed = await blake3(blob, options.signal);
  } else if (file instanceof Blob) {
    blob = file;
    name = (file as Partial<File>).name || undefined;
    hashed = await blake3(blob, options.signal);
  } else if (file instanceof Uint8Array || file instanceof ArrayBuffer) {
    hashed = await blake3(file, options.signal);
    blob = new Blob([file as BlobPart]);
  } else {
    throw new InvalidArgumentError('must be a Blob, File, Uint8Array, ArrayBuffer, ReadableStream, Node Readable or (Node) a file path', 'file');
  }
  const filePath = options.filename ?? name ?? 'upload.bin';
  const contentType = options.contentType ?? (blob.type || guessType(filePath));
  if (await hasAssetHash(t, hashed.hash, opts)) {
    try {
      const json = { hash: hashed.hash, file_path: filePath, ...(options.tags ? { tags: options.tags } : {}), ...(options.expiresIn !== undefined ? { expires_in: options.expiresIn } : {}) };
      const r = await t.request<V2Asset>({ method: 'POST', path: 'api/v2/assets/from-hash', json, auth: true, options: opts });
      return { ...r, bytesSent: 0, via: 'from-hash' };
    } catch (err) {
      // 404 blob_not_found: the bytes went between the HEAD and this POST (retention, a delete): send them.
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
  const form = new FormData();
  for (const [k, v] of metadata(filePath, contentType, hashed.hash, options)) form.append(k, v);
  // Last: Cloud reads the metadata before the bytes. A path's Blob is read from the file as the request is sent.
  form.append('file', blob, baseName(filePath));
  const r = await t.request<V2Asset>({ method: 'POST', path: 'api/v2/assets', body: form, auth: true, options: opts, fetch: platform.uploadFetch });
  // The server answered 2xx only after reading the whole body (it checks expected_hash against it).
  return { ...r, bytesSent: hashed.size, via: 'upload' };
}

/**
 * `GET api/v2/assets/{id}`: the asset with a fresh `url`.
 *
 * @throws {@link NotFoundError} for an unknown (or deleted) id.
 *
 * @example
 * ```ts
 * const { data: asset } = await getAsset(transport, 'f1291d83-…');
 * console.log(asset.hash, asset.size_bytes, asset.url);
 * ```
 */
export async function getAsset(t: Transport, id: string, options: RequestOptions = {}): Promise<WithResponse<V2Asset>> {
  if (typeof id !== 'string' || id === '') throw new InvalidArgumentError('must be a non-empty string', 'id');
  return t.request<V2Asset>({ method: 'GET', path: path`api/v2/assets/${id}`, auth: true, options });
}

/**
 * `DELETE api/v2/assets/{id}`: deletes the record (shared bytes survive, and
 * jobs that already read it are not affected).
 *
 * @throws {@link NotFoundError} for an unknown or already deleted id.
 * @throws {@link ConflictError} (409 `asset_in_use`): a job still holds it.
 *
 * @example
 * ```ts
 * await deleteAsset(transport, asset.id);
 * ```
 */
export async function deleteAsset(t: Transport, id: string, options: RequestOptions = {}): Promise<void> {
  if (typeof id !== 'string' || id === '') throw new InvalidArgumentError('must be a non-empty string', 'id');
  await t.request<undefined>({ method: 'DELETE', path: path`api/v2/assets/${id}`, auth: true, options });
}

/**
 * The value a workflow input takes for an asset (`core/ASSET`): the id, which
 * the server goes by, with the hash and `file_path` for the reader.
 *
 * @param filePath The name to give the input, when not the asset's own `file_path`.
 *
 * @example
 * ```ts
 * workflow['10'].inputs.image = assetReference(asset);
 * // { __type: 'core/ASSET', info: { id: 'f1291d83-…', hash: 'blake3:c5d6…', file_path: 'photo.png' } }
 * ```
 */
export const assetReference = (a: V2Asset, filePath?: string): AssetReference => {
  const info: AssetReference['info'] = { id: a.id };
  if (typeof a.hash === 'string') info.hash = a.hash;
  const name = filePath ?? a.file_path;
  if (typeof name === 'string') info.file_path = name;
  return { __type: 'core/ASSET', info };
};
