/**
 * A streaming `multipart/form-data` reader for the upload endpoints. Part
 * bodies are handed to sinks chunk by chunk as they arrive, so a 1 GiB file
 * is hashed and counted without ever being held in memory.
 *
 * Tolerant where real clients differ (preamble, transport padding after a
 * delimiter, no trailing CRLF after the closing delimiter, parts without
 * headers), strict where a server must be (header size, number of parts,
 * a body that ends before the closing delimiter).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './http.ts';

/** Headers of one part. */
export interface MultipartPart {
  /** `name` of the part's Content-Disposition. */
  name: string;
  /** `filename` (or `filename*`) of the Content-Disposition; undefined for plain fields. */
  filename: string | undefined;
  contentType: string | undefined;
  headers: Record<string, string>;
}

/** Receives one part's body. Throwing (an {@link HttpError}) aborts the parse. */
export interface PartSink {
  write(chunk: Buffer): void;
  end(): void;
}

const MAX_HEADER_BYTES = 16 * 1024;
const MAX_PARTS = 32;

/** The boundary of a `multipart/form-data` content type, or undefined. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return undefined;
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

/** Parses `form-data; name="x"; filename="a.png"` parameters (quoted strings with escapes, RFC 5987 `filename*`). */
export function parseDisposition(value: string): Record<string, string> {
  const params: Record<string, string> = {};
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    const key = (m[1] ?? '').toLowerCase();
    let v = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '').trim();
    if (key.endsWith('*')) {
      const ext = /^([\w-]*)'[^']*'(.*)$/.exec(v);
      try {
        v = decodeURIComponent(ext ? (ext[2] ?? '') : v);
      } catch {
        // keep the raw value
      }
      params[key.slice(0, -1)] = v;
    } else if (!(key in params)) {
      params[key] = v;
    }
  }
  return params;
}

type State = 'body' | 'after-delimiter' | 'headers' | 'epilogue';

/** The push parser: feed it chunks with {@link write}, then call {@link end}. */
export class MultipartParser {
  readonly #delimiter: Buffer;
  readonly #onPart: (part: MultipartPart) => PartSink;
  // The preamble is parsed as the body of a discarded part: the stream is
  // prefixed with CRLF so that the first delimiter looks like every other.
  #buf: Buffer = Buffer.from('\r\n');
  #state: State = 'body';
  #sink: PartSink | undefined;
  #parts = 0;

  constructor(boundary: string, onPart: (part: MultipartPart) => PartSink) {
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.#onPart = onPart;
  }

  /** True once the closing delimiter was seen. */
  get done(): boolean {
    return this.#state === 'epilogue';
  }

  write(chunk: Buffer): void {
    if (this.#state === 'epilogue') return;
    const tail = this.#buf;
    const d = this.#delimiter.length;
    if (this.#state === 'body' && tail.length > 0 && tail.length < d && chunk.length >= d) {
      // Inside a big body only a short tail is pending. Rather than copying
      // every chunk behind it, look for a delimiter starting in the tail; when
      // there is none, the tail is body and the chunk can be parsed alone.
      const joint = Buffer.concat([tail, chunk.subarray(0, d - 1)]);
      const at = joint.indexOf(this.#delimiter);
      if (at < 0 || at >= tail.length) {
        this.#sink?.write(tail);
        this.#buf = chunk;
        this.#run();
        return;
      }
    }
    this.#buf = tail.length === 0 ? chunk : Buffer.concat([tail, chunk]);
    this.#run();
  }

  /** Throws 400 when the body ended before the closing delimiter. */
  end(): void {
    if (this.#state !== 'epilogue') throw new HttpError(400, 'Malformed multipart body: it ends before the closing boundary', 'invalid_multipart');
  }

  #run(): void {
    for (;;) {
      const buf = this.#buf;
      if (this.#state === 'body') {
        const at = buf.indexOf(this.#delimiter);
        if (at < 0) {
          // Keep a tail that could be the start of a delimiter split across chunks.
          const keep = this.#delimiter.length - 1;
          if (buf.length > keep) {
            this.#sink?.write(buf.subarray(0, buf.length - keep));
            this.#buf = buf.subarray(buf.length - keep);
          }
          return;
        }
        if (at > 0) this.#sink?.write(buf.subarray(0, at));
        this.#sink?.end();
        this.#sink = undefined;
        this.#buf = buf.subarray(at + this.#delimiter.length);
        this.#state = 'after-delimiter';
      } else if (this.#state === 'after-delimiter') {
        // `--` closes; otherwise optional padding (spaces, tabs) then CRLF.
        let i = 0;
        if (buf.length < 2) return;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          this.#state = 'epilogue';
          this.#buf = Buffer.alloc(0);
          return;
        }
        while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x09)) i++;
        if (i + 2 > buf.length) {
          if (i > 256) throw new HttpError(400, 'Malformed multipart body: padding after a boundary', 'invalid_multipart');
          return;
        }
        if (buf[i] !== 0x0d || buf[i + 1] !== 0x0a) throw new HttpError(400, 'Malformed multipart body: a boundary is not followed by CRLF', 'invalid_multipart');
        this.#buf = buf.subarray(i + 2);
        this.#state = 'headers';
      } else if (this.#state === 'headers') {
        let end: number;
        let skip: number;
        if (buf.length >= 2 && buf[0] === 0x0d && buf[1] === 0x0a) {
          end = 0; // a part without headers
          skip = 2;
        } else {
          end = buf.indexOf('\r\n\r\n', 0, 'latin1');
          skip = 4;
        }
        if (end < 0) {
          if (buf.length > MAX_HEADER_BYTES) throw new HttpError(400, 'Malformed multipart body: part headers too large', 'invalid_multipart');
          return;
        }
        if (++this.#parts > MAX_PARTS) throw new HttpError(400, `Too many multipart parts (more than ${MAX_PARTS})`, 'invalid_multipart');
        this.#sink = this.#onPart(parsePartHeaders(buf.subarray(0, end).toString('utf8')));
        this.#buf = buf.subarray(end + skip);
        this.#state = 'body';
      } else {
        return;
      }
    }
  }
}

function parsePartHeaders(block: string): MultipartPart {
  const headers: Record<string, string> = {};
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const params = parseDisposition(headers['content-disposition'] ?? '');
  return { name: params.name ?? '', filename: params.filename, contentType: headers['content-type'], headers };
}

// ---------------------------------------------------------------------------
// The upload reader

/** The file part of an upload, after streaming. */
export interface UploadedFile {
  /** Name the client gave. */
  filename: string;
  contentType: string | undefined;
  size: number;
  /** sha256 hex of the bytes. */
  sha256: string;
  /** The bytes, when `size` ≤ the retain limit. */
  data: Buffer | undefined;
}

/** Options of {@link readUpload}. */
export interface ReadUploadOptions {
  /** Name of the file part. */
  fileField: string;
  /** Largest accepted file, bytes (`Infinity`: no limit). */
  maxFileBytes: number;
  /** Files up to this size keep their bytes in memory. */
  retainBytes: number;
  /** Largest plain field, bytes. */
  maxFieldBytes?: number;
}

/**
 * After a rejected upload the rest of the body is read and discarded, up to
 * this much, so the client finishes sending and reads the 400 cleanly instead
 * of seeing its connection reset mid-request.
 */
const DRAIN_LIMIT = 64 * 1024 * 1024;

/**
 * Streams a multipart request: plain fields are collected (bounded), the
 * file part is hashed and counted as it arrives. Throws {@link HttpError} 400
 * for a malformed body, a missing file part, a duplicate one, or a file above
 * `maxFileBytes`.
 */
export async function readUpload(
  req: IncomingMessage,
  res: ServerResponse,
  options: ReadUploadOptions,
): Promise<{ fields: Record<string, string>; file: UploadedFile }> {
  const boundary = boundaryOf(req.headers['content-type']);
  if (!boundary) throw new HttpError(400, 'Expected a multipart/form-data body with a boundary', 'invalid_multipart');
  const maxField = options.maxFieldBytes ?? 64 * 1024;
  const fields: Record<string, string> = {};
  let file: UploadedFile | undefined;

  const parser = new MultipartParser(boundary, (part) => {
    if (part.name === options.fileField && part.filename !== undefined) {
      if (file) throw new HttpError(400, `More than one '${options.fileField}' part`, 'invalid_multipart');
      const current: UploadedFile = { filename: part.filename, contentType: part.contentType, size: 0, sha256: '', data: undefined };
      file = current;
      const hash = createHash('sha256');
      let kept: Buffer[] | undefined = [];
      return {
        write(chunk) {
          current.size += chunk.length;
          if (current.size > options.maxFileBytes) {
            throw new HttpError(400, `File exceeds the upload limit of ${options.maxFileBytes} bytes`, 'file_too_large');
          }
          hash.update(chunk);
          if (kept && current.size <= options.retainBytes) kept.push(chunk);
          else kept = undefined;
        },
        end() {
          current.sha256 = hash.digest('hex');
          current.data = kept ? Buffer.concat(kept) : undefined;
        },
      };
    }
    if (part.filename !== undefined) {
      // Another file part: read and ignore.
      return { write() {}, end() {} };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    return {
      write(chunk) {
        size += chunk.length;
        if (size > maxField) throw new HttpError(400, `Field '${part.name}' exceeds ${maxField} bytes`, 'invalid_multipart');
        chunks.push(chunk);
      },
      end() {
        fields[part.name] = Buffer.concat(chunks).toString('utf8');
      },
    };
  });

  await new Promise<void>((resolve, reject) => {
    let failure: unknown;
    let drained = 0;
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      if (failure !== undefined) {
        drained += chunk.length;
        if (drained > DRAIN_LIMIT) {
          // Too much left to swallow: answer now and drop the connection after the response.
          res.setHeader('Connection', 'close');
          settle(failure);
        }
        return;
      }
      try {
        parser.write(chunk);
      } catch (err) {
        failure = err;
      }
    };
    req.on('data', onData);
    req.once('end', () => {
      if (failure === undefined) {
        try {
          parser.end();
        } catch (err) {
          failure = err;
        }
      }
      settle(failure);
    });
    req.once('error', (err) => settle(failure ?? err));
    req.once('close', () => settle(failure ?? new HttpError(400, 'Upload aborted by the client', 'aborted')));
  });

  if (!file) throw new HttpError(400, `Missing file part '${options.fileField}'`, 'invalid_multipart');
  return { fields, file };
}
