/**
 * Binary WebSocket frames of the cloud service (`cloud.md`, Events).
 *
 * Layout, big-endian, the first 4 bytes being the event type:
 *
 * | type | name                        | then                                                        |
 * |------|-----------------------------|-------------------------------------------------------------|
 * | 1    | PREVIEW_IMAGE               | u32 `image_type` (1 JPEG, 2 PNG), image bytes               |
 * | 3    | TEXT                        | u32 `node_id_len` N, N bytes UTF-8 node id, UTF-8 text      |
 * | 4    | PREVIEW_IMAGE_WITH_METADATA | u32 `metadata_len` N, N bytes UTF-8 JSON, image bytes       |
 *
 * Decoding never copies the payload: `image` (and `data` of unknown types) is
 * a `Uint8Array` view over the caller's buffer, so a 16 MiB preview costs what
 * a 16-byte one does. Hold on to it only as long as that buffer is not reused.
 *
 * Every length is checked against the frame; a short or lying frame throws
 * {@link FrameDecodeError} naming the field, never a `RangeError`.
 *
 * Text decoding: the node id and the metadata must be valid UTF-8 (a fatal
 * decoder: a garbled id would route the frame to the wrong node, garbled JSON
 * is unusable). The progress text of type 3 is display-only, so it is decoded
 * leniently: a broken sequence becomes U+FFFD instead of losing the frame.
 *
 * No Node `Buffer` here: this module is part of the browser build. A Node
 * `Buffer` is accepted as input all the same (it is a `Uint8Array`).
 *
 * @module
 */
import { FrameDecodeError } from '../errors.ts';

/** Event type numbers of binary frames. */
export const FRAME_TYPES = { PREVIEW_IMAGE: 1, TEXT: 3, PREVIEW_IMAGE_WITH_METADATA: 4 } as const;

/** `image_type` codes of PREVIEW_IMAGE frames and their MIME types. */
export const IMAGE_TYPE_MIME: Readonly<Record<number, ImageMime>> = { 1: 'image/jpeg', 2: 'image/png' };

/** A preview's MIME type: the common ones typed, any other string kept. */
export type ImageMime = 'image/jpeg' | 'image/png' | 'image/webp' | 'image/gif' | (string & {});

/**
 * Metadata of a PREVIEW_IMAGE_WITH_METADATA frame. The five members of the
 * spec are typed (and type-checked when present); any other member the
 * server sends (the local server adds `image_type`, a MIME type) is kept.
 */
export interface PreviewMetadata {
  node_id?: string;
  display_node_id?: string;
  real_node_id?: string;
  prompt_id?: string;
  parent_node_id?: string | null;
  /** A MIME type; the local server adds it. */
  image_type?: string;
}

/** Type 1: a preview image. */
export interface PreviewImageFrame {
  type: 'preview_image';
  eventType: 1;
  /** The raw `image_type` code (1 JPEG, 2 PNG; other codes are kept). */
  imageType: number;
  /** MIME type of `image`; `undefined` for an `image_type` code the spec does not define. */
  mime: ImageMime | undefined;
  /** The image bytes: a view over the input buffer (no copy); goes straight into `new Blob([frame.image])`. */
  image: Uint8Array<ArrayBuffer>;
}

/** Type 3: progress text of a node. */
export interface TextFrame {
  type: 'text';
  eventType: 3;
  /** The node the text is about. */
  nodeId: string;
  /** The text (decoded leniently: broken UTF-8 becomes U+FFFD). */
  text: string;
}

/** Type 4: a preview image with metadata naming its job and node. */
export interface PreviewImageWithMetadataFrame {
  type: 'preview_image_with_metadata';
  eventType: 4;
  /** The parsed metadata, unknown members kept. */
  metadata: PreviewMetadata;
  /** `metadata.node_id`. */
  nodeId: string | undefined;
  /** `metadata.prompt_id`: the job the preview belongs to. */
  promptId: string | undefined;
  /** MIME type: the metadata's `image_type` when it names one, else sniffed from the magic bytes, else `undefined`. */
  mime: ImageMime | undefined;
  /** The image bytes: a view over the input buffer (no copy); goes straight into `new Blob([frame.image])`. */
  image: Uint8Array<ArrayBuffer>;
}

/** A frame of a type this SDK does not know; passed through, not thrown. */
export interface UnknownFrame {
  type: 'unknown';
  /** The event type number. */
  eventType: number;
  /** The bytes after the 4-byte event type: a view over the input buffer (no copy). */
  data: Uint8Array<ArrayBuffer>;
}

/** A decoded binary frame, discriminated on `type`. */
export type PreviewFrame = PreviewImageFrame | TextFrame | PreviewImageWithMetadataFrame | UnknownFrame;

/** The frames that carry an image (types 1 and 4): both have `image` and `mime`. */
export type ImageFrame = PreviewImageFrame | PreviewImageWithMetadataFrame;

/**
 * Whether a frame carries an image (type 1 or 4).
 *
 * @example
 * ```ts
 * if (isImageFrame(frame)) show(new Blob([frame.image], { type: frame.mime ?? 'application/octet-stream' }));
 * ```
 */
export function isImageFrame(frame: PreviewFrame): frame is ImageFrame {
  return frame.type === 'preview_image' || frame.type === 'preview_image_with_metadata';
}

/**
 * What {@link encodeFrame} needs: any decoded frame, or just the members that
 * go on the wire (derived members such as `mime` and `promptId` are ignored).
 */
export type EncodableFrame =
  | { type: 'preview_image'; imageType: number; image: Uint8Array }
  | { type: 'text'; nodeId: string; text: string }
  | { type: 'preview_image_with_metadata'; metadata: PreviewMetadata | Record<string, unknown>; image: Uint8Array }
  | { type: 'unknown'; eventType: number; data: Uint8Array };

// Created once: a TextDecoder is not free to construct and decoding is on the hot path.
// ignoreBOM keeps a leading U+FEFF as content, so decoding is the exact inverse of TextEncoder.
const strictUtf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenientUtf8 = /* @__PURE__ */ new TextDecoder('utf-8', { ignoreBOM: true });
const utf8Encoder = /* @__PURE__ */ new TextEncoder();

const METADATA_STRING_KEYS = ['node_id', 'display_node_id', 'real_node_id', 'prompt_id'] as const;

/**
 * Decodes one binary frame. Synchronous and zero-copy: `image`/`data` are
 * views over `input`'s buffer, honouring a view's `byteOffset` (a Node
 * `Buffer` slice at any offset works).
 *
 * @throws {FrameDecodeError} when a length does not fit the frame, the node id
 * or metadata is not valid UTF-8, or the metadata is not a JSON object.
 *
 * @example
 * ```ts
 * socket.binaryType = 'arraybuffer';
 * socket.onmessage = (ev) => {
 *   if (typeof ev.data === 'string') return;
 *   const frame = decodeFrame(ev.data);
 *   if (frame.type === 'preview_image_with_metadata') show(frame.promptId, new Blob([frame.image], { type: frame.mime }));
 * };
 * ```
 */
export function decodeFrame(input: ArrayBuffer | ArrayBufferView): PreviewFrame {
  let source: ArrayBufferLike;
  let offset: number;
  let length: number;
  if (ArrayBuffer.isView(input)) {
    source = input.buffer;
    offset = input.byteOffset;
    length = input.byteLength;
  } else if (isArrayBuffer(input)) {
    source = input;
    offset = 0;
    length = input.byteLength;
  } else {
    throw new FrameDecodeError('frame', `expected an ArrayBuffer or a typed array, got ${describe(input)}${isBlob(input) ? ' (use decodeFrameAsync for a Blob)' : ''}`);
  }
  let buffer: ArrayBuffer;
  if (isPlainArrayBuffer(source)) buffer = source;
  else {
    // Shared memory is copied once, so `image` is a plain `Uint8Array<ArrayBuffer>` (a BlobPart).
    buffer = new Uint8Array(new Uint8Array(source, offset, length)).buffer;
    offset = 0;
  }
  if (length < 4) throw new FrameDecodeError('event_type', `frame of ${length} bytes is shorter than its 4-byte event type`);
  const view = new DataView(buffer, offset, length);
  const eventType = view.getUint32(0);
  switch (eventType) {
    case 1: {
      if (length < 8) throw new FrameDecodeError('image_type', `frame of ${length} bytes ends before its 4-byte image_type`);
      const imageType = view.getUint32(4);
      return { type: 'preview_image', eventType: 1, imageType, mime: IMAGE_TYPE_MIME[imageType], image: new Uint8Array(buffer, offset + 8, length - 8) };
    }
    case 3: {
      if (length < 8) throw new FrameDecodeError('node_id_len', `frame of ${length} bytes ends before its 4-byte node_id_len`);
      const n = view.getUint32(4);
      if (n > length - 8) throw new FrameDecodeError('node_id_len', `node_id_len ${n} exceeds the ${length - 8} bytes left in the frame`);
      const nodeId = decodeStrict(new Uint8Array(buffer, offset + 8, n), 'node_id');
      const text = lenientUtf8.decode(new Uint8Array(buffer, offset + 8 + n, length - 8 - n));
      return { type: 'text', eventType: 3, nodeId, text };
    }
    case 4: {
      if (length < 8) throw new FrameDecodeError('metadata_len', `frame of ${length} bytes ends before its 4-byte metadata_len`);
      const n = view.getUint32(4);
      if (n > length - 8) throw new FrameDecodeError('metadata_len', `metadata_len ${n} exceeds the ${length - 8} bytes left in the frame`);
      const metadata = parseMetadata(decodeStrict(new Uint8Array(buffer, offset + 8, n), 'metadata'));
      const image = new Uint8Array(buffer, offset + 8 + n, length - 8 - n);
      const declared = metadata.image_type;
      const mime = typeof declared === 'string' && declared !== '' ? declared : sniffImageMime(image);
      return { type: 'preview_image_with_metadata', eventType: 4, metadata, nodeId: metadata.node_id, promptId: metadata.prompt_id, mime, image };
    }
    default:
      return { type: 'unknown', eventType, data: new Uint8Array(buffer, offset + 4, length - 4) };
  }
}

/**
 * Like {@link decodeFrame}, and also accepts a `Blob` (what a browser
 * WebSocket delivers when `binaryType` is left at `'blob'`). Only a Blob is
 * read asynchronously (and copied once, by `Blob.arrayBuffer()`).
 *
 * @example
 * ```ts
 * ws.onmessage = async (ev) => { if (typeof ev.data !== 'string') handle(await decodeFrameAsync(ev.data)); };
 * ```
 */
export async function decodeFrameAsync(input: Blob | ArrayBuffer | ArrayBufferView): Promise<PreviewFrame> {
  if (isBlob(input)) return decodeFrame(await input.arrayBuffer());
  return decodeFrame(input);
}

/**
 * Encodes a frame: the exact inverse of {@link decodeFrame}
 * (`decodeFrame(encodeFrame(f))` deep-equals `f` for every decoded frame `f`).
 * The metadata of type 4 is written with `JSON.stringify`, so its bytes
 * equal the received ones only when the sender also wrote compact JSON.
 *
 * @throws {FrameDecodeError} when a number does not fit its u32 field.
 *
 * @example
 * ```ts
 * const bytes = encodeFrame({ type: 'preview_image', imageType: 2, image: png });
 * decodeFrame(bytes).type; // 'preview_image'
 * ```
 */
export function encodeFrame(frame: EncodableFrame): Uint8Array<ArrayBuffer> {
  switch (frame.type) {
    case 'preview_image':
      return assemble(1, u32('image_type', frame.imageType), undefined, frame.image);
    case 'text': {
      const id = utf8Encoder.encode(frame.nodeId);
      return assemble(3, id.length, id, utf8Encoder.encode(frame.text));
    }
    case 'preview_image_with_metadata': {
      const json = utf8Encoder.encode(JSON.stringify(frame.metadata));
      return assemble(4, json.length, json, frame.image);
    }
    case 'unknown': {
      const out = new Uint8Array(4 + frame.data.length);
      new DataView(out.buffer).setUint32(0, u32('event_type', frame.eventType));
      out.set(frame.data, 4);
      return out;
    }
  }
}

/**
 * The MIME type announced by an image's magic bytes: JPEG, PNG, GIF or WEBP;
 * `undefined` otherwise.
 *
 * @example
 * ```ts
 * sniffImageMime(new Uint8Array([0x89, 0x50, 0x4e, 0x47])); // 'image/png'
 * ```
 */
export function sniffImageMime(bytes: Uint8Array): ImageMime | undefined {
  const b0 = bytes[0];
  if (b0 === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (b0 === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'image/png';
  // "GIF8"
  if (b0 === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46 && bytes[3] === 0x38) return 'image/gif';
  // "RIFF" size "WEBP"
  if (b0 === 0x52 && bytes[1] === 0x49 && bytes[2] === 0x46 && bytes[3] === 0x46 && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp';
  return undefined;
}

function assemble(eventType: number, word: number, head: Uint8Array | undefined, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const headLen = head ? head.length : 0;
  const out = new Uint8Array(8 + headLen + tail.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, eventType);
  view.setUint32(4, word);
  if (head) out.set(head, 8);
  out.set(tail, 8 + headLen);
  return out;
}

function u32(field: string, n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new FrameDecodeError(field, `${n} does not fit an unsigned 32-bit integer`);
  return n;
}

function decodeStrict(bytes: Uint8Array, field: 'node_id' | 'metadata'): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new FrameDecodeError(field, 'is not valid UTF-8');
  }
}

function parseMetadata(text: string): PreviewMetadata {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new FrameDecodeError('metadata', 'is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FrameDecodeError('metadata', `is not a JSON object (got ${typeOf(value)})`);
  }
  const meta = value as Record<string, unknown>;
  // Missing members are fine (lenient); a present one of the wrong type would make the typed view lie.
  for (const key of METADATA_STRING_KEYS) {
    const v = meta[key];
    if (v !== undefined && typeof v !== 'string') throw new FrameDecodeError('metadata', `${key} is ${typeOf(v)}, expected a string`);
  }
  const parent = meta.parent_node_id;
  if (parent !== undefined && parent !== null && typeof parent !== 'string') {
    throw new FrameDecodeError('metadata', `parent_node_id is ${typeOf(parent)}, expected a string or null`);
  }
  return meta as PreviewMetadata;
}

function isPlainArrayBuffer(x: ArrayBufferLike): x is ArrayBuffer {
  return x instanceof ArrayBuffer || Object.prototype.toString.call(x) === '[object ArrayBuffer]';
}

function isArrayBuffer(x: unknown): x is ArrayBuffer {
  // The tag test also accepts buffers from another realm (iframe, vm context), where instanceof fails.
  if (x instanceof ArrayBuffer) return true;
  const tag = Object.prototype.toString.call(x);
  return tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]';
}

function isBlob(x: unknown): x is Blob {
  return typeof x === 'object' && x !== null && typeof (x as Blob).arrayBuffer === 'function' && typeof (x as Blob).size === 'number';
}

function describe(x: unknown): string {
  if (x === null) return 'null';
  if (typeof x !== 'object') return typeof x;
  return Object.prototype.toString.call(x).slice(8, -1);
}

function typeOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}
