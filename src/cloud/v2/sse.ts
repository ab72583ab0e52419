/**
 * A `text/event-stream` reader (the WHATWG HTML "server-sent events"
 * interpretation rules), over any `ReadableStream` of bytes: a `fetch` body in
 * Node or a browser, so that a stream can carry headers (`Authorization`),
 * which `EventSource` cannot.
 *
 * Ours rather than `eventsource-parser` (4.x, about 2 KB minified): the part of
 * it this SDK needs is the sixty lines below, and a dependency's callback API
 * would still need this generator around it. Comments are yielded, not dropped:
 * a server's `: keepalive` is what tells an idle-timer that a quiet job's stream
 * is still alive.
 *
 * Not kept: `id:` and `retry:` (Comfy API v2 has no resume, and the reconnect
 * pace is the caller's), and an event cut off by the end of the stream (the
 * standard discards it).
 *
 * @module
 */

/** One dispatched event: its `event:` name (`message` when none was given) and its `data:` lines joined with `\n`. */
export interface SseEvent {
  event: string;
  data: string;
}

/** One comment line (`: keepalive`), without its colon and the one space after it. */
export interface SseComment {
  comment: string;
}

/** What {@link readEvents} yields. */
export type SseItem = SseEvent | SseComment;

/**
 * The events and comments of a `text/event-stream` body, in order, as they
 * arrive. Lines may end in CRLF, CR or LF, and a line or an event may be
 * split across any number of chunks (a CRLF too); a leading byte order mark
 * is skipped; a `data:` field may repeat (its values are joined with `\n`); an
 * event with no `data:` field is not dispatched.
 *
 * Ends when the body ends (a partial event at the end is discarded) or when
 * `signal` aborts (quietly: the caller knows it aborted); rejects when the body
 * fails (a dropped connection). Leaving the loop early cancels the body, which
 * releases the connection.
 *
 * @example
 * ```ts
 * const res = await fetch(`${base}/api/v2/jobs/${id}/events`, { headers: { authorization: `Bearer ${key}` }, signal });
 * for await (const item of readEvents(res.body!, signal)) {
 *   if ('comment' in item) continue; // a keepalive
 *   console.log(item.event, JSON.parse(item.data));
 * }
 * ```
 */
export async function* readEvents(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<SseItem, void, undefined> {
  const reader = body.getReader();
  // A reader blocked in read() is woken only by cancel(): the signal must reach it even when the body is not fetch's.
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener('abort', onAbort, { once: true });
  // The decoder skips a leading BOM by itself (ignoreBOM: false), and keeps a code point split across chunks.
  const decoder = new TextDecoder('utf-8');
  const parser = new LineParser();
  let finished = false;
  try {
    for (;;) {
      if (signal?.aborted) return;
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (signal?.aborted) return;
        throw err;
      }
      if (chunk.done) {
        finished = true;
        // The end of the stream ends its last line, never its last event.
        yield* parser.push(decoder.decode(), true);
        return;
      }
      yield* parser.push(decoder.decode(chunk.value, { stream: true }), false);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    // A consumer that left early (or an abort): the connection is let go now, not when the body is collected.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** The standard's line and field rules, fed text in whatever pieces it arrives. */
class LineParser {
  /** The start of a line whose end has not arrived yet. */
  #partial = '';
  /** The last piece ended in CR: an LF that starts the next one belongs to that line end. */
  #afterCr = false;
  #event = '';
  #data: string[] = [];

  /** The items completed by `text`; at the end (`last`), an unterminated last line counts as a line. */
  *push(text: string, last: boolean): Generator<SseItem> {
    // A chunk that ended inside a code point decodes to nothing yet: it must not forget a CR before it.
    if (text === '' && !last) return;
    let start = this.#afterCr && text.startsWith('\n') ? 1 : 0;
    this.#afterCr = false;
    // Only the new text is scanned, and each of CR and LF once: a long line (a preview's base64) in many chunks stays linear.
    let lf = text.indexOf('\n', start);
    let cr = text.indexOf('\r', start);
    for (;;) {
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      const line = this.#partial + text.slice(start, end);
      this.#partial = '';
      const item = this.#line(line);
      if (item) yield item;
      start = end + 1;
      if (text[end] === '\r') {
        if (start === text.length) this.#afterCr = true;
        else if (text[start] === '\n') start++;
      }
    }
    if (start < text.length) this.#partial += text.slice(start);
    if (last && this.#partial) {
      const item = this.#line(this.#partial);
      this.#partial = '';
      if (item) yield item;
    }
  }

  #line(line: string): SseItem | undefined {
    if (line === '') return this.#dispatch();
    const colon = line.indexOf(':');
    if (colon === 0) return { comment: stripSpace(line.slice(1)) };
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : stripSpace(line.slice(colon + 1));
    if (field === 'event') this.#event = value;
    else if (field === 'data') this.#data.push(value);
    // `id`, `retry` and unknown fields: nothing a v2 stream needs.
    return undefined;
  }

  #dispatch(): SseEvent | undefined {
    const data = this.#data;
    const event = this.#event || 'message';
    this.#data = [];
    this.#event = '';
    return data.length === 0 ? undefined : { event, data: data.join('\n') };
  }
}

const stripSpace = (s: string): string => (s.startsWith(' ') ? s.slice(1) : s);
