// Binary frame codec: round trips, zero-copy views, hostile input, and the
// frames of the local-server recordings rebuilt from their logged fields.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeFrame, decodeFrameAsync, encodeFrame, sniffImageMime, type EncodableFrame, type PreviewFrame } from '../../src/cloud/frames.ts';
import { FrameDecodeError } from '../../src/errors.ts';

const FIXTURES = process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server';
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG_MAGIC = [0xff, 0xd8, 0xff, 0xe0];

const u32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const utf8 = (s: string) => [...new TextEncoder().encode(s)];
const bytes = (...parts: (number[] | Uint8Array)[]) => new Uint8Array(parts.flatMap((p) => [...p]));
const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0')).join('');

/** Copies `frame` into a larger buffer at `offset`, returning a view: what a pooled Buffer or a sliced message looks like. */
function atOffset(frame: Uint8Array, offset: number, tail = 3): Uint8Array {
  const backing = new Uint8Array(offset + frame.length + tail).fill(0xee);
  backing.set(frame, offset);
  return new Uint8Array(backing.buffer, offset, frame.length);
}

function expectFrameError(fn: () => unknown, field: string): FrameDecodeError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(FrameDecodeError);
  expect((caught as FrameDecodeError).field).toBe(field);
  return caught as FrameDecodeError;
}

// Well-formed strings only: a lone surrogate cannot survive UTF-8 (TextEncoder turns it into U+FFFD).
const text = fc.string({ unit: 'binary', maxLength: 40 });
const payload = fc.uint8Array({ maxLength: 300 });
const offset = fc.integer({ min: 0, max: 37 });
const metadataArb = fc.record(
  {
    node_id: text,
    display_node_id: text,
    real_node_id: text,
    prompt_id: fc.uuid(),
    parent_node_id: fc.option(text, { nil: null }),
    image_type: fc.constantFrom('image/png', 'image/jpeg', 'image/webp'),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);
const encodable: fc.Arbitrary<EncodableFrame> = fc.oneof(
  fc.record({ type: fc.constant('preview_image' as const), imageType: fc.oneof(fc.constantFrom(1, 2), fc.nat()), image: payload }),
  fc.record({ type: fc.constant('text' as const), nodeId: text, text: fc.string({ unit: 'binary', maxLength: 200 }) }),
  fc.record({ type: fc.constant('preview_image_with_metadata' as const), metadata: metadataArb, image: payload }),
);

describe('decodeFrame: round trips', () => {
  it('decode(encode(f)) keeps every field, at any byteOffset, for all three types', () => {
    fc.assert(
      fc.property(encodable, offset, (f, off) => {
        const wire = encodeFrame(f);
        const view = atOffset(wire, off);
        const d = decodeFrame(view);
        expect(d.type).toBe(f.type);
        switch (f.type) {
          case 'preview_image':
            expect(d).toMatchObject({ eventType: 1, imageType: f.imageType, mime: f.imageType === 1 ? 'image/jpeg' : f.imageType === 2 ? 'image/png' : undefined });
            expect([...(d as { image: Uint8Array }).image]).toEqual([...f.image]);
            break;
          case 'text':
            expect(d).toEqual({ type: 'text', eventType: 3, nodeId: f.nodeId, text: f.text });
            break;
          case 'preview_image_with_metadata': {
            const m = d as Extract<PreviewFrame, { type: 'preview_image_with_metadata' }>;
            expect(m.metadata).toEqual(JSON.parse(JSON.stringify(f.metadata)));
            expect(m.promptId).toBe(f.metadata.prompt_id);
            expect(m.nodeId).toBe(f.metadata.node_id);
            expect(m.mime).toBe(f.metadata.image_type ?? sniffImageMime(f.image));
            expect([...m.image]).toEqual([...f.image]);
            break;
          }
        }
        // And the codec is closed: re-encoding the decoded frame gives the same bytes.
        expect(hex(encodeFrame(d))).toBe(hex(wire));
      }),
      { numRuns: 400 },
    );
  });

  it('returns views over the input buffer (zero copy), honouring byteOffset', () => {
    fc.assert(
      fc.property(payload, offset, (img, off) => {
        const view = atOffset(encodeFrame({ type: 'preview_image', imageType: 2, image: img }), off);
        const d = decodeFrame(view);
        if (d.type !== 'preview_image') throw new Error(d.type);
        expect(d.image.buffer).toBe(view.buffer);
        expect(d.image.byteOffset).toBe(off + 8);
        expect(d.image.byteLength).toBe(img.length);
      }),
    );
    const meta = atOffset(encodeFrame({ type: 'preview_image_with_metadata', metadata: { prompt_id: 'p' }, image: new Uint8Array(PNG_MAGIC) }), 5);
    const d4 = decodeFrame(meta);
    expect(d4.type === 'preview_image_with_metadata' && d4.image.buffer === meta.buffer).toBe(true);
    const raw = encodeFrame({ type: 'preview_image', imageType: 1, image: new Uint8Array(JPEG_MAGIC) });
    const d1 = decodeFrame(raw.buffer as ArrayBuffer);
    expect(d1.type === 'preview_image' && d1.image.buffer === raw.buffer).toBe(true);
    // Writing through the view changes the input: proof there is no copy.
    if (d1.type === 'preview_image') d1.image[0] = 0x00;
    expect(raw[8]).toBe(0x00);
  });

  it('accepts a Node Buffer slice at an odd offset (pooled Buffers start anywhere)', () => {
    const frame = encodeFrame({ type: 'preview_image_with_metadata', metadata: { node_id: '6', prompt_id: 'job-1', parent_node_id: null }, image: new Uint8Array([...PNG_MAGIC, 1, 2, 3]) });
    const pool = Buffer.alloc(frame.length + 64, 0xaa);
    pool.set(frame, 13);
    const slice = pool.subarray(13, 13 + frame.length);
    expect(slice.byteOffset % 2).toBe(1);
    const d = decodeFrame(slice);
    if (d.type !== 'preview_image_with_metadata') throw new Error(d.type);
    expect(d.promptId).toBe('job-1');
    expect(d.mime).toBe('image/png');
    expect(d.image.buffer).toBe(pool.buffer);
    expect([...d.image]).toEqual([...PNG_MAGIC, 1, 2, 3]);
    // A pooled small Buffer too (shares the allocator's slab).
    const small = Buffer.from(encodeFrame({ type: 'text', nodeId: '5', text: 'hé' }));
    expect(decodeFrame(small)).toEqual({ type: 'text', eventType: 3, nodeId: '5', text: 'hé' });
  });

  it('accepts any typed array or DataView, not only Uint8Array', () => {
    const frame = encodeFrame({ type: 'preview_image', imageType: 2, image: new Uint8Array(PNG_MAGIC) });
    const padded = new Uint8Array(4 + frame.length);
    padded.set(frame, 4);
    expect(decodeFrame(new DataView(padded.buffer, 4)).type).toBe('preview_image');
    expect(decodeFrame(new Uint32Array(padded.buffer, 4, frame.length / 4)).type).toBe('preview_image');
  });

  it('decodeFrameAsync reads Blobs and passes buffers through', async () => {
    const frame = encodeFrame({ type: 'text', nodeId: '12', text: 'step 3/20' });
    await expect(decodeFrameAsync(new Blob([frame]))).resolves.toEqual({ type: 'text', eventType: 3, nodeId: '12', text: 'step 3/20' });
    await expect(decodeFrameAsync(frame)).resolves.toMatchObject({ type: 'text', nodeId: '12' });
    await expect(decodeFrameAsync(new Blob([new Uint8Array([0, 0])]))).rejects.toBeInstanceOf(FrameDecodeError);
    // The synchronous decoder says what to do with a Blob instead of misreading it.
    expect(expectFrameError(() => decodeFrame(new Blob([frame]) as unknown as ArrayBuffer), 'frame').message).toMatch(/decodeFrameAsync/);
  });
});

describe('decodeFrame: types and metadata', () => {
  it('keeps an unknown image_type code: mime undefined, the raw number reported, nothing thrown', () => {
    const d = decodeFrame(bytes(u32(1), u32(7), PNG_MAGIC));
    expect(d).toMatchObject({ type: 'preview_image', eventType: 1, imageType: 7, mime: undefined });
  });

  it('passes unknown event types through with their raw bytes (a view)', () => {
    const wire = bytes(u32(2), [9, 8, 7]);
    const d = decodeFrame(wire);
    expect(d).toMatchObject({ type: 'unknown', eventType: 2 });
    if (d.type !== 'unknown') throw new Error(d.type);
    expect([...d.data]).toEqual([9, 8, 7]);
    expect(d.data.buffer).toBe(wire.buffer);
    expect(hex(encodeFrame(d))).toBe(hex(wire));
    expect(decodeFrame(bytes(u32(0xffffffff)))).toMatchObject({ type: 'unknown', eventType: 0xffffffff, data: new Uint8Array(0) });
  });

  it('prefers the metadata MIME type over sniffing, sniffs when there is none', () => {
    const meta = (m: object, img: number[]) => {
      const json = utf8(JSON.stringify(m));
      return decodeFrame(bytes(u32(4), u32(json.length), json, img));
    };
    expect(meta({ image_type: 'image/webp' }, PNG_MAGIC)).toMatchObject({ mime: 'image/webp' });
    expect(meta({}, PNG_MAGIC)).toMatchObject({ mime: 'image/png' });
    expect(meta({}, JPEG_MAGIC)).toMatchObject({ mime: 'image/jpeg' });
    expect(meta({}, utf8('GIF89a'))).toMatchObject({ mime: 'image/gif' });
    expect(meta({}, [...utf8('RIFF'), 0, 0, 0, 0, ...utf8('WEBPVP8 ')])).toMatchObject({ mime: 'image/webp' });
    expect(meta({}, [1, 2, 3])).toMatchObject({ mime: undefined });
    expect(meta({ image_type: 42 }, PNG_MAGIC)).toMatchObject({ mime: 'image/png' });
    expect(meta({}, [])).toMatchObject({ mime: undefined, image: new Uint8Array(0) });
  });

  it('keeps unknown metadata keys and reads node_id / prompt_id', () => {
    const m = { node_id: '6', prompt_id: 'p', parent_node_id: null, image_type: 'image/png', future: { x: [1] } };
    const d = decodeFrame(encodeFrame({ type: 'preview_image_with_metadata', metadata: m, image: new Uint8Array(PNG_MAGIC) }));
    expect(d).toMatchObject({ nodeId: '6', promptId: 'p', metadata: m });
  });

  it('accepts metadata without any of the typed members', () => {
    const d = decodeFrame(bytes(u32(4), u32(2), utf8('{}'), PNG_MAGIC));
    expect(d).toMatchObject({ type: 'preview_image_with_metadata', metadata: {}, nodeId: undefined, promptId: undefined, mime: 'image/png' });
  });

  it('decodes the progress text leniently and the node id strictly', () => {
    const d = decodeFrame(bytes(u32(3), u32(1), utf8('5'), [0x61, 0xff, 0x62]));
    expect(d).toEqual({ type: 'text', eventType: 3, nodeId: '5', text: 'a\ufffdb' });
    expectFrameError(() => decodeFrame(bytes(u32(3), u32(2), [0xc3, 0x28], utf8('x'))), 'node_id');
    // Empty id and empty text are legal.
    expect(decodeFrame(bytes(u32(3), u32(0)))).toEqual({ type: 'text', eventType: 3, nodeId: '', text: '' });
  });

  it('keeps a leading BOM as content, so text survives the round trip', () => {
    const f = { type: 'text' as const, nodeId: '\ufeffid', text: '\ufefftext' };
    expect(decodeFrame(encodeFrame(f))).toEqual({ ...f, eventType: 3 });
  });
});

describe('decodeFrame: hostile input', () => {
  it('names the field of a truncated header', () => {
    expectFrameError(() => decodeFrame(new Uint8Array(0)), 'event_type');
    expectFrameError(() => decodeFrame(new Uint8Array([0, 0, 0])), 'event_type');
    expectFrameError(() => decodeFrame(bytes(u32(1), [0, 0, 0])), 'image_type');
    expectFrameError(() => decodeFrame(bytes(u32(3), [0])), 'node_id_len');
    expectFrameError(() => decodeFrame(bytes(u32(4))), 'metadata_len');
  });

  it('rejects lengths that point past the end of the frame, even by one byte or by 4 GiB', () => {
    expectFrameError(() => decodeFrame(bytes(u32(3), u32(2), utf8('5'))), 'node_id_len');
    expectFrameError(() => decodeFrame(bytes(u32(3), u32(0xffffffff), utf8('5'))), 'node_id_len');
    expectFrameError(() => decodeFrame(bytes(u32(4), u32(3), utf8('{}'))), 'metadata_len');
    expectFrameError(() => decodeFrame(bytes(u32(4), u32(0x80000000), utf8('{}'))), 'metadata_len');
    // A lying length inside a view must not read the bytes beyond the view.
    const inner = bytes(u32(4), u32(5), utf8('{}'));
    const backing = bytes([0xaa], inner, utf8('xyz'), PNG_MAGIC);
    expectFrameError(() => decodeFrame(new Uint8Array(backing.buffer, 1, inner.length)), 'metadata_len');
  });

  it('rejects metadata that is not UTF-8, not JSON, not an object, or wrongly typed', () => {
    const meta = (raw: number[]) => () => decodeFrame(bytes(u32(4), u32(raw.length), raw, PNG_MAGIC));
    expectFrameError(meta([0x7b, 0xff, 0x7d]), 'metadata');
    expectFrameError(meta(utf8('{"node_id":')), 'metadata');
    expectFrameError(meta([]), 'metadata');
    for (const v of ['null', '[]', '"x"', '42', 'true']) expectFrameError(meta(utf8(v)), 'metadata');
    expectFrameError(meta(utf8('{"prompt_id":42}')), 'metadata');
    expectFrameError(meta(utf8('{"node_id":["6"]}')), 'metadata');
    expectFrameError(meta(utf8('{"parent_node_id":7}')), 'metadata');
  });

  it('rejects input that is not binary data', () => {
    for (const v of [null, undefined, 'text', 42, {}, [0, 0, 0, 1]]) expectFrameError(() => decodeFrame(v as unknown as ArrayBuffer), 'frame');
  });

  const onlyFrameErrors = (input: Uint8Array) => {
    try {
      decodeFrame(input);
    } catch (err) {
      if (!(err instanceof FrameDecodeError)) throw err;
    }
  };

  it('random bytes decode or raise FrameDecodeError, nothing else', () => {
    // Biased to the known types so the interesting paths get most of the runs.
    const head = fc.tuple(fc.constantFrom(0, 1, 2, 3, 4, 5, 0xffffffff), fc.oneof(fc.nat({ max: 64 }), fc.nat()), fc.uint8Array({ maxLength: 80 }), offset);
    fc.assert(fc.property(head, ([t, n, rest, off]) => onlyFrameErrors(atOffset(bytes(u32(t), u32(n), rest), off))), { numRuns: 2000 });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), offset, (b, off) => onlyFrameErrors(atOffset(b, off))), { numRuns: 1000 });
  });

  it('mutated valid frames (flipped bytes, truncations, extensions) raise nothing but FrameDecodeError', () => {
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('extend' as const), extra: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
    );
    fc.assert(
      fc.property(encodable, fc.array(mutation, { minLength: 1, maxLength: 4 }), offset, (f, muts, off) => {
        let b = encodeFrame(f);
        for (const m of muts) {
          if (m.kind === 'flip' && b.length) b[m.at % b.length] = m.value;
          else if (m.kind === 'truncate') b = b.slice(0, m.at % (b.length + 1));
          else if (m.kind === 'extend') b = bytes(b, m.extra);
        }
        onlyFrameErrors(atOffset(b, off));
      }),
      { numRuns: 2000 },
    );
  });

  // Its cost per call against a 16-byte frame's, and against a decoder that copies: bench/frames.ts.
  it('a huge frame is decoded in place: its image is a view of the frame, not a copy', () => {
    const big = encodeFrame({ type: 'preview_image', imageType: 2, image: new Uint8Array(8 * 1024 * 1024) });
    const d = decodeFrame(big);
    expect(d.type === 'preview_image' && d.image.buffer === big.buffer).toBe(true);
    expect(d.type === 'preview_image' && [d.image.byteOffset, d.image.byteLength]).toEqual([big.byteOffset + 8, 8 * 1024 * 1024]);
  });
});

describe('encodeFrame', () => {
  it('writes the layout of the spec', () => {
    expect(hex(encodeFrame({ type: 'preview_image', imageType: 2, image: new Uint8Array(PNG_MAGIC) }))).toBe('0000000100000002' + '89504e470d0a1a0a');
    expect(hex(encodeFrame({ type: 'text', nodeId: '5', text: 'ok' }))).toBe('00000003' + '00000001' + '35' + '6f6b');
    expect(hex(encodeFrame({ type: 'preview_image_with_metadata', metadata: { a: 1 }, image: new Uint8Array([1]) }))).toBe('00000004' + '00000007' + hex(new TextEncoder().encode('{"a":1}')) + '01');
  });

  it('refuses numbers that do not fit a u32', () => {
    expectFrameError(() => encodeFrame({ type: 'preview_image', imageType: -1, image: new Uint8Array() }), 'image_type');
    expectFrameError(() => encodeFrame({ type: 'preview_image', imageType: 2 ** 32, image: new Uint8Array() }), 'image_type');
    expectFrameError(() => encodeFrame({ type: 'unknown', eventType: 1.5, data: new Uint8Array() }), 'event_type');
  });

  it('accepts image views at an offset and copies only their bytes', () => {
    const backing = new Uint8Array([9, 9, ...PNG_MAGIC, 9]);
    const wire = encodeFrame({ type: 'preview_image', imageType: 2, image: backing.subarray(2, 10) });
    expect(hex(wire)).toBe('0000000100000002' + hex(new Uint8Array(PNG_MAGIC)));
  });
});

// The recordings log each binary frame's length, its first 16 bytes and the decoded fields.
// The frames are rebuilt from those (the image body beyond its magic bytes is not recorded:
// it is filled with zeros to the recorded length), then decoded and compared.
interface BinaryRecord {
  len: number;
  hex16: string;
  event_type: number;
  image_type?: number;
  node_id?: string;
  text?: string;
  metadata_len?: number;
  metadata?: Record<string, unknown>;
  image_magic_hex?: string;
  image_len?: number;
}

// The local server writes its metadata with Python's json.dumps defaults: ", " and ": " separators.
function pythonJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pythonJson).join(', ')}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pythonJson(x)}`).join(', ')}}`;
}

function rebuild(r: BinaryRecord): Uint8Array {
  const magic = (h = '') => (h.match(/../g) ?? []).map((x) => parseInt(x, 16));
  const image = (len: number, h?: string) => {
    const img = new Uint8Array(len);
    img.set(magic(h));
    return img;
  };
  switch (r.event_type) {
    case 1:
      return bytes(u32(1), u32(r.image_type!), image(r.image_len!, r.image_magic_hex));
    case 3:
      return bytes(u32(3), u32(utf8(r.node_id!).length), utf8(r.node_id!), utf8(r.text!));
    case 4: {
      const json = utf8(pythonJson(r.metadata));
      return bytes(u32(4), u32(json.length), json, image(r.image_len!, r.image_magic_hex));
    }
    default:
      throw new Error(`no rebuild for type ${r.event_type}`);
  }
}

// Verbatim from 04_binary_noflags.jsonl and 05_binary_flags.jsonl, so the test runs without the shared fixtures too.
const RECORDED_BINARY: BinaryRecord[] = [
  { len: 206, hex16: '000000010000000289504e470d0a1a0a', event_type: 1, image_type: 2, image_magic_hex: '89504e470d0a1a0a', image_len: 198 },
  { len: 45, hex16: '00000003000000013577696474683a20', event_type: 3, node_id: '5', text: 'width: 64, height: 48\n batch size: 1' },
  {
    len: 371,
    hex16: '00000004000000a57b226e6f64655f69',
    event_type: 4,
    metadata_len: 165,
    metadata: { node_id: '6', prompt_id: '14be957c-c4b1-4e28-b8b5-cb4c710312bc', display_node_id: '6', parent_node_id: null, real_node_id: '6', image_type: 'image/png' },
    image_magic_hex: '89504e470d0a1a0a',
    image_len: 198,
  },
];

function recordedBinary(): BinaryRecord[] {
  if (!existsSync(FIXTURES)) return [];
  const out: BinaryRecord[] = [];
  for (const f of readdirSync(FIXTURES).filter((n) => n.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(FIXTURES, f), 'utf8').split('\n')) {
      if (!line.includes('"binary"')) continue;
      const rec = JSON.parse(line) as BinaryRecord & { dir: string; kind: string };
      if (rec.dir === 'in' && rec.kind === 'binary') out.push(rec);
    }
  }
  return out;
}

describe('recorded frames', () => {
  const check = (r: BinaryRecord) => {
    const wire = rebuild(r);
    expect(wire.length).toBe(r.len);
    expect(hex(wire.subarray(0, 16))).toBe(r.hex16);
    const d = decodeFrame(atOffset(wire, 3));
    expect(d.eventType).toBe(r.event_type);
    if (d.type === 'preview_image') {
      expect(d).toMatchObject({ imageType: r.image_type, mime: 'image/png' });
      expect(d.image.length).toBe(r.image_len);
      expect(hex(d.image.subarray(0, 8))).toBe(r.image_magic_hex);
    } else if (d.type === 'text') {
      expect(d).toEqual({ type: 'text', eventType: 3, nodeId: r.node_id, text: r.text });
    } else if (d.type === 'preview_image_with_metadata') {
      expect(wire.length - 8 - d.image.length).toBe(r.metadata_len);
      expect(d.metadata).toEqual(r.metadata);
      expect(d).toMatchObject({ nodeId: r.metadata!.node_id, promptId: r.metadata!.prompt_id, mime: 'image/png' });
      expect(d.image.length).toBe(r.image_len);
      expect(hex(d.image.subarray(0, 8))).toBe(r.image_magic_hex);
    } else {
      throw new Error(`unexpected ${d.type}`);
    }
  };

  it('types 1, 3 and 4 as logged (embedded copies)', () => {
    for (const r of RECORDED_BINARY) check(r);
  });

  it.skipIf(!existsSync(FIXTURES))('every binary frame of the shared recordings', () => {
    const all = recordedBinary();
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (const r of all) check(r);
  });
});
