// The text/event-stream reader of Comfy API v2 (src/cloud/v2/sse.ts): the standard's line and field
// rules over bytes cut anywhere, against a body made of chosen chunks.
import { describe, expect, it } from 'vitest';
import { readEvents, type SseItem } from '../../../src/cloud/v2/sse.ts';

const enc = new TextEncoder();

/** A body that delivers exactly these chunks (strings are UTF-8 encoded; bytes as they are). */
function body(chunks: Array<string | Uint8Array>, opts: { thenError?: Error; thenHang?: boolean } = {}): ReadableStream<Uint8Array> & { cancelled: boolean } {
  let i = 0;
  const s = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) {
        const x = chunks[i++]!;
        c.enqueue(typeof x === 'string' ? enc.encode(x) : x);
      } else if (opts.thenError) c.error(opts.thenError);
      else if (opts.thenHang) return new Promise(() => undefined);
      else c.close();
      return undefined;
    },
    cancel() {
      (s as { cancelled?: boolean }).cancelled = true;
    },
  });
  return Object.assign(s, { cancelled: false });
}

async function all(b: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<SseItem[]> {
  const out: SseItem[] = [];
  for await (const item of readEvents(b, signal)) out.push(item);
  return out;
}

/** Every way of cutting `text` into two chunks, and into single characters. */
function cuts(text: string): Array<Array<string | Uint8Array>> {
  const bytes = enc.encode(text);
  const ways: Array<Array<string | Uint8Array>> = [];
  for (let i = 1; i < bytes.length; i++) ways.push([bytes.subarray(0, i), bytes.subarray(i)]);
  ways.push([...bytes].map((b) => new Uint8Array([b])));
  return ways;
}

describe('readEvents', () => {
  it('reads an event name and its data', async () => {
    expect(await all(body(['event: status\ndata: {"status":"running"}\n\n']))).toEqual([{ event: 'status', data: '{"status":"running"}' }]);
  });

  it('joins repeated data lines with \\n and names an unnamed event `message`', async () => {
    expect(await all(body(['data: a\ndata:b\ndata\ndata:  c\n\n']))).toEqual([{ event: 'message', data: 'a\nb\n\n c' }]);
  });

  it('reads CRLF, CR and LF line ends alike, mixed in one stream', async () => {
    const text = 'event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\revent: c\ndata: 3\n\n';
    expect(await all(body([text]))).toEqual([
      { event: 'a', data: '1' },
      { event: 'b', data: '2' },
      { event: 'c', data: '3' },
    ]);
  });

  it('gives the same items however the bytes are cut (a CRLF cut in two is one line end; a code point cut in two is one character)', async () => {
    const text = ': keepalive\r\nevent: progress\r\ndata: {"message":"é ✓ 🎨"}\r\n\r\nevent: status\rdata: x\r\r';
    const whole = await all(body([text]));
    expect(whole).toEqual([{ comment: 'keepalive' }, { event: 'progress', data: '{"message":"é ✓ 🎨"}' }, { event: 'status', data: 'x' }]);
    for (const chunks of cuts(text)) expect(await all(body(chunks))).toEqual(whole);
  });

  it('yields comments (a keepalive keeps an idle timer quiet) without the colon and one space', async () => {
    expect(await all(body([': keepalive\n:\n:  two\n\n']))).toEqual([{ comment: 'keepalive' }, { comment: '' }, { comment: ' two' }]);
  });

  it('skips a leading byte order mark, only the first', async () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    expect(await all(body([bom, 'data: x\n\n']))).toEqual([{ event: 'message', data: 'x' }]);
    expect(await all(body([new Uint8Array([0xef]), new Uint8Array([0xbb, 0xbf, 0x64]), 'ata: y\n\n']))).toEqual([{ event: 'message', data: 'y' }]);
  });

  it('ignores id:, retry: and unknown fields, and does not dispatch an event without data', async () => {
    expect(await all(body(['id: 7\nretry: 10\nfoo: bar\nevent: lonely\n\nevent: e\ndata: d\n\n']))).toEqual([{ event: 'e', data: 'd' }]);
  });

  it('discards an event cut off by the end of the stream', async () => {
    expect(await all(body(['event: a\ndata: 1\n\nevent: b\ndata: 2\n']))).toEqual([{ event: 'a', data: '1' }]);
  });

  it('yields each event as it arrives, before the stream ends', async () => {
    const b = body(['event: a\ndata: 1\n\n'], { thenHang: true });
    const it = readEvents(b);
    expect((await it.next()).value).toEqual({ event: 'a', data: '1' });
    await it.return();
    expect(b.cancelled).toBe(true);
  });

  it('rejects when the body fails (a dropped connection), after what came before', async () => {
    const seen: SseItem[] = [];
    await expect(
      (async () => {
        for await (const item of readEvents(body(['data: 1\n\n', 'data: 2'], { thenError: new TypeError('terminated') }))) seen.push(item);
      })(),
    ).rejects.toThrow('terminated');
    expect(seen).toEqual([{ event: 'message', data: '1' }]);
  });

  it('ends quietly when the signal aborts, and cancels the body', async () => {
    const ac = new AbortController();
    const b = body([': hi\n'], { thenHang: true });
    const done = all(b, ac.signal);
    await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    expect(await done).toEqual([{ comment: 'hi' }]);
    expect(b.cancelled).toBe(true);
  });

  it('reads a long line in many chunks in linear time (a preview of 4 MB of base64 in 16 KB chunks)', async () => {
    const data = 'A'.repeat(4 * 1024 * 1024);
    const text = `event: preview\ndata: ${data}\n\n`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 16384) chunks.push(text.slice(i, i + 16384));
    const items = await all(body(chunks));
    expect(items).toHaveLength(1);
    expect((items[0] as { data: string }).data.length).toBe(data.length);
  });
});
