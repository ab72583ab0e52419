/**
 * File storage of the emulated cloud: uploads, produced outputs and large
 * synthetic files, in one flat namespace keyed by `type` and file name
 * (`subfolder` is ignored, as the spec says). Also the small PNG encoder used
 * for outputs and previews, and the signer of download URLs.
 *
 * Memory stays bounded: file bytes are capped in total (oldest evicted
 * first), uploads above a size are kept as metadata only, and synthetic files
 * are generated on the fly when served.
 *
 * @module
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { deflateSync } from 'node:zlib';

/** One stored file. */
export interface StoredFile {
  /** File name, unique per `type`. */
  name: string;
  /** `input`, `output` or `temp`. */
  type: string;
  /** Size in bytes (also when the bytes themselves are not kept). */
  size: number;
  contentType: string;
  /** In-memory bytes; absent for synthetic files and for uploads above the retain limit. */
  data?: Buffer;
  /** Bytes are generated when served (see {@link FileStore.addSynthetic}). */
  synthetic?: boolean;
  /** sha256 hex of the bytes, for uploads. */
  sha256?: string;
  created: number;
}

/** Limits of a {@link FileStore}. */
export interface FileStoreLimits {
  /** Total bytes of file contents kept in memory; oldest files are evicted beyond it. */
  maxBytes: number;
  /** Number of files kept; oldest evicted beyond it. */
  maxFiles: number;
}

const CONTENT_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mov': 'video/quicktime',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.flac': 'audio/flac',
  '.ogg': 'audio/ogg',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Lower-cased extension of a file name (`.png`), or `''` when it has none or an odd one. */
export function extensionOf(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const m = /(\.[A-Za-z0-9]{1,10})$/.exec(base);
  return m && m.index > 0 ? (m[1] ?? '').toLowerCase() : '';
}

/** Content type for a file name, by extension. */
export function contentTypeFor(filename: string, fallback = 'application/octet-stream'): string {
  return CONTENT_TYPES[extensionOf(filename)] ?? fallback;
}

/** The in-memory store. Insertion order is age order, which makes eviction a walk from the front. */
export class FileStore {
  readonly #files = new Map<string, StoredFile>();
  #bytes = 0;
  limits: FileStoreLimits;

  constructor(limits: FileStoreLimits) {
    this.limits = limits;
  }

  /** Adds or replaces a file (a replaced file becomes the newest). */
  put(file: StoredFile): StoredFile {
    this.delete(file.name, file.type);
    this.#files.set(keyOf(file.name, file.type), file);
    this.#bytes += file.data?.length ?? 0;
    this.#evict();
    return file;
  }

  /** Registers a file whose bytes are generated when served: a large download without the memory. */
  addSynthetic(name: string, size: number, type = 'output', contentType = contentTypeFor(name)): StoredFile {
    if (!Number.isSafeInteger(size) || size < 0) throw new RangeError('size must be a non-negative safe integer');
    return this.put({ name, type, size, contentType, synthetic: true, created: Date.now() });
  }

  get(name: string, type: string): StoredFile | undefined {
    return this.#files.get(keyOf(name, type));
  }

  has(name: string, type: string): boolean {
    return this.#files.has(keyOf(name, type));
  }

  delete(name: string, type: string): boolean {
    const key = keyOf(name, type);
    const old = this.#files.get(key);
    if (!old) return false;
    this.#bytes -= old.data?.length ?? 0;
    return this.#files.delete(key);
  }

  /** Names of the files of one type, sorted. */
  names(type: string): string[] {
    return [...this.#files.values()].filter((f) => f.type === type).map((f) => f.name).sort();
  }

  /** Number of files and bytes held in memory. */
  get stats(): { files: number; bytes: number } {
    return { files: this.#files.size, bytes: this.#bytes };
  }

  clear(): void {
    this.#files.clear();
    this.#bytes = 0;
  }

  /**
   * Answers 200 with the file, streaming, with `Content-Type` and
   * `Content-Length`. Resolves when the response is done or the client left.
   * Throws nothing: a file without kept bytes answers 404 itself (the caller
   * checks existence before).
   */
  async serve(req: IncomingMessage, res: ServerResponse, file: StoredFile): Promise<void> {
    const body = openFile(file);
    if (!body) {
      const msg = Buffer.from(JSON.stringify({ error: 'not_found', message: `The bytes of ${file.name} were not kept (upload above the retain limit)` }));
      res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(msg.length) });
      res.end(msg);
      return;
    }
    res.writeHead(200, {
      'Content-Type': file.contentType,
      'Content-Length': String(file.size),
      // Header values must be printable ASCII here; names given through addFile() may be anything.
      'Content-Disposition': `filename="${file.name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"`,
      'Cache-Control': 'no-store',
    });
    if (req.method === 'HEAD') {
      body.destroy();
      res.end();
      return;
    }
    // A client that leaves mid-download rejects the pipeline; that is not the server's error.
    await pipeline(body, res).catch(() => undefined);
  }

  #evict(): void {
    for (const [key, f] of this.#files) {
      if (this.#bytes <= this.limits.maxBytes && this.#files.size <= this.limits.maxFiles) return;
      this.#files.delete(key);
      this.#bytes -= f.data?.length ?? 0;
    }
  }
}

function keyOf(name: string, type: string): string {
  return `${type}\u0000${name}`;
}

const SYNTHETIC_CHUNK = 64 * 1024;
let syntheticPattern: Buffer | undefined;

/** A readable of the file's bytes, or undefined when they were not kept. */
function openFile(file: StoredFile): Readable | undefined {
  if (file.data) return Readable.from([file.data], { objectMode: false });
  if (!file.synthetic) return undefined;
  // One shared, deterministic 64 KiB block repeated: generating costs nothing and the
  // reader gets backpressure through Readable's own read() calls.
  syntheticPattern ??= Buffer.from(Array.from({ length: SYNTHETIC_CHUNK }, (_, i) => (i * 31 + 7) & 0xff));
  const pattern = syntheticPattern;
  let left = file.size;
  return new Readable({
    highWaterMark: SYNTHETIC_CHUNK * 4,
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const n = Math.min(left, SYNTHETIC_CHUNK);
      left -= n;
      this.push(n === SYNTHETIC_CHUNK ? pattern : pattern.subarray(0, n));
    },
  });
}

// ---------------------------------------------------------------------------
// Signed download URLs

/** What a signed URL names. */
export interface SignedTarget {
  filename: string;
  type: string;
  /** Expiry, ms since epoch. */
  expires: number;
}

/**
 * HMAC-SHA256 signer of download URLs with a per-emulator random secret:
 * `/signed/<token>?expires=<ms>&sig=<hmac>` where the token names the file.
 */
export class UrlSigner {
  readonly #secret = randomBytes(32);

  /** The path and query of a signed URL (append to the emulator origin). */
  sign(filename: string, type: string, expires: number): string {
    const token = Buffer.from(JSON.stringify([type, filename]), 'utf8').toString('base64url');
    return `/signed/${token}?expires=${expires}&sig=${this.#mac(filename, type, expires)}`;
  }

  /**
   * Checks a token and its query. `'forbidden'` for anything malformed or a
   * wrong signature (checked before expiry, so expiry cannot be forged),
   * `'expired'` after the expiry.
   */
  verify(token: string, query: URLSearchParams, now: number): SignedTarget | 'forbidden' | 'expired' {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    } catch {
      return 'forbidden';
    }
    if (!Array.isArray(parsed) || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'string') return 'forbidden';
    const [type, filename] = parsed as [string, string];
    const expiresRaw = query.get('expires') ?? '';
    const sig = query.get('sig') ?? '';
    if (!/^\d{1,16}$/.test(expiresRaw)) return 'forbidden';
    const expires = Number(expiresRaw);
    const want = Buffer.from(this.#mac(filename, type, expires));
    const got = Buffer.from(sig);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return 'forbidden';
    if (now > expires) return 'expired';
    return { filename, type, expires };
  }

  #mac(filename: string, type: string, expires: number): string {
    return createHmac('sha256', this.#secret).update(`${type}\n${filename}\n${expires}`).digest('base64url');
  }
}

// ---------------------------------------------------------------------------
// PNG

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

// zlib.crc32 appeared in Node 22.2; the package supports all of 22.
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = (CRC_TABLE[(c ^ (buf[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A valid RGB PNG of `width`×`height`: a diagonal gradient seeded by `seed`,
 * so different outputs have different bytes. The emulator's outputs are made
 * with it; tests and examples use it for input images.
 *
 * @example
 * ```ts
 * emulator.cloud.addFile('example.png', makePng(96, 96, 1)); // as if uploaded
 * ```
 */
export function makePng(width: number, height: number, seed: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  const row = 1 + width * 3;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    raw[y * row] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      const o = y * row + 1 + x * 3;
      raw[o] = (seed + x * 16) & 0xff;
      raw[o + 1] = ((seed >>> 8) + y * 16) & 0xff;
      raw[o + 2] = ((seed >>> 16) + (x + y) * 8) & 0xff;
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * A valid GIF of one pixel, its colour seeded by `seed`: the emulator's
 * animated outputs (a video pack's `gifs`) are made with it.
 *
 * @example
 * ```ts
 * makeGif(0xff0000).subarray(0, 6).toString(); // 'GIF89a'
 * ```
 */
export function makeGif(seed: number): Buffer {
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    // 1×1, a global table of two colours: the seeded one, then black.
    Buffer.from([1, 0, 1, 0, 0x80, 0, 0, seed & 0xff, (seed >>> 8) & 0xff, (seed >>> 16) & 0xff, 0, 0, 0]),
    // The image: 1×1 at 0,0, LZW of "clear, colour 0, end" with 2-bit codes.
    Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0, 0x3b]),
  ]);
}
