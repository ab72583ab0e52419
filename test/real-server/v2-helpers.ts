// Helpers of the real v2 server suite (v2.int.test.ts) and the v2 bench (bench/v2-official.ts): the ComfyUI behind
// the proxy, PNGs made and decoded here (output bytes checked as pixels), model-free workflows, and a TCP relay
// that counts what clients send and can lose the answer of a submission after the server made the job.
import { randomBytes } from 'node:crypto';
import { createConnection, createServer, type Socket } from 'node:net';
import { deflateSync, inflateSync } from 'node:zlib';

type Node = { class_type: string; inputs: Record<string, unknown> };
export type ApiWorkflow = Record<string, Node>;

/**
 * The URL of the ComfyUI behind a comfy-api-proxy: `PLATFORMUI_V2_COMFY_URL` when set, else the `upstream` its
 * `/api/v2/health` names (the proxy of ../shared/real-server/v2 answers `{"status":"healthy","upstream":…}`).
 */
export async function comfyBehind(v2Url: string): Promise<string> {
  const named = process.env.PLATFORMUI_V2_COMFY_URL;
  if (named) return named.replace(/\/+$/, '');
  const health = (await (await fetch(new URL('/api/v2/health', v2Url))).json()) as { upstream?: unknown };
  if (typeof health.upstream !== 'string') throw new Error(`${v2Url}/api/v2/health names no upstream: set PLATFORMUI_V2_COMFY_URL`);
  return health.upstream.replace(/\/+$/, '');
}

// ---- PNG ----------------------------------------------------------------------------------------------------

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
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

/** An RGB PNG of random pixels (incompressible: its size is about w × h × 3 bytes). */
export function noisePng(width: number, height: number): { png: Buffer; pixels: Buffer } {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const pixels = randomBytes(width * height * 3);
  const raw = Buffer.alloc((1 + width * 3) * height);
  for (let y = 0; y < height; y++) pixels.copy(raw, y * (1 + width * 3) + 1, y * width * 3, (y + 1) * width * 3);
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return { png: Buffer.concat([sig, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 1 })), chunk('IEND', Buffer.alloc(0))]), pixels };
}

/** Decodes an 8-bit, non-interlaced PNG (grey, RGB, grey+alpha or RGBA, as ComfyUI's SaveImage writes them). */
export function decodePng(bytes: Uint8Array): { width: number; height: number; channels: number; pixels: Buffer } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let o = 8; o < b.length; ) {
    const len = b.readUInt32BE(o);
    const type = b.toString('latin1', o + 4, o + 8);
    const data = b.subarray(o + 8, o + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) throw new Error(`PNG: bit depth ${data[8]}, interlace ${data[12]} not handled`);
      channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[data[9]!] ?? 0;
      if (!channels) throw new Error(`PNG: colour type ${data[9]} not handled`);
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    o += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[y * stride + x - channels]! : 0;
      const up = y > 0 ? out[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? out[(y - 1) * stride + x - channels]! : 0;
      let v = line[x]!;
      if (filter === 1) v += a;
      else if (filter === 2) v += up;
      else if (filter === 3) v += (a + up) >> 1;
      else if (filter === 4) {
        const p = a + up - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? up : c;
      }
      out[y * stride + x] = v & 0xff;
    }
  }
  return { width, height, channels, pixels: out };
}

// ---- workflows ----------------------------------------------------------------------------------------------

/** LoadImage (node '1', its image set by the `inputs` option) → ImageInvert → SaveImage (node '3'). */
export const invertWorkflow = (prefix: string): ApiWorkflow => ({
  '1': { class_type: 'LoadImage', inputs: { image: 'set-by-inputs.png' } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

/** EmptyImage of one colour → SaveImage: a job of well under a second. */
export const tinyWorkflow = (prefix: string, color = Math.floor(Math.random() * 0xffffff)): ApiWorkflow => ({
  '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color } },
  '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: prefix } },
});

let sigmaSeq = 0;
/**
 * EmptyImage 256×256 → n × ImageBlur (radius 15) → SaveImage (node '9'): about 2.5 s a node on this CPU. Each
 * call's blurs have a sigma of their own (ComfyUI caches a node whose inputs it has seen: it would skip them).
 */
export function longWorkflow(n: number, prefix: string): ApiWorkflow {
  const base = 1 + ((Date.now() % 100_000) / 100_000) * 3 + (sigmaSeq++ % 1000) / 1e6;
  const w: ApiWorkflow = { '1': { class_type: 'EmptyImage', inputs: { width: 256, height: 256, batch_size: 1, color: Math.floor(Math.random() * 0xffffff) } } };
  let prev = '1';
  for (let i = 0; i < n; i++) {
    const id = String(100 + i);
    w[id] = { class_type: 'ImageBlur', inputs: { image: [prev, 0], blur_radius: 15, sigma: Number((base + i / 1000).toFixed(6)) } };
    prev = id;
  }
  w['9'] = { class_type: 'SaveImage', inputs: { images: [prev, 0], filename_prefix: prefix } };
  return w;
}

// ---- relay --------------------------------------------------------------------------------------------------

/** A relay to a v2 server that counts what clients send and can lose submissions' answers. */
export interface V2Relay {
  /** The relay's base URL, for the client. */
  url: string;
  /** Bytes clients sent since the last take (request lines, headers, bodies); resets the count. */
  take(): number;
  /** Connections opened since the last take; resets the count. */
  takeConnections(): number;
  /**
   * The next `n` answers `201` of `POST /api/v2/jobs` are lost: the request reached the server (the job exists),
   * and the connection is cut as the answer comes back, before the client reads a byte of it.
   */
  loseSubmitAnswers(n: number): void;
  /** Answers lost so far. */
  readonly lost: number;
  /** Ends every connection it carries now (an SSE stream, a download), as a network drop would. */
  cutAll(): void;
  close(): Promise<void>;
}

/** Starts a relay to `upstream` (HTTP/1.1, one request at a time per connection, as fetch sends them). */
export async function startV2Relay(upstream: string | URL): Promise<V2Relay> {
  const target = new URL(upstream);
  let sent = 0;
  let connections = 0;
  let toLose = 0;
  let lost = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    connections++;
    const up = createConnection({ host: target.hostname, port: Number(target.port) });
    client.setNoDelay(true);
    up.setNoDelay(true);
    open.add(client).add(up);
    const end = () => [client, up].forEach((s) => (s.destroy(), open.delete(s)));
    client.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
    // Whether the request on the way is a submission (its answer may be lost).
    let submitting = false;
    client.on('data', (c: Buffer) => {
      sent += c.byteLength;
      const head = c.subarray(0, 24).toString('latin1');
      if (/^[A-Z]+ \//.test(head)) submitting = /^POST \/api\/v2\/jobs[ ?]/.test(head);
      up.write(c);
    });
    up.on('data', (c: Buffer) => {
      if (submitting && toLose > 0 && c.subarray(0, 12).toString('latin1') === 'HTTP/1.1 201') {
        toLose--;
        lost++;
        return end();
      }
      client.write(c);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    take: () => [sent, (sent = 0)][0]!,
    takeConnections: () => [connections, (connections = 0)][0]!,
    loseSubmitAnswers: (n) => void (toLose = n),
    get lost() {
      return lost;
    },
    cutAll: () => open.forEach((s) => s.destroy()),
    close: () => new Promise<void>((r) => (open.forEach((s) => s.destroy()), server.close(() => r()))),
  };
}
