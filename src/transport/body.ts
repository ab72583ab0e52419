/**
 * A streamed response body with an idle timeout. The per-attempt timeout
 * ends when the headers arrive (a large body takes its time), so without
 * this a body that stops flowing would hold its reader forever: a download,
 * a signed URL, a proxy result, the CLI's `--out`.
 *
 * @module
 */

/** What {@link guardBody} needs: the bounds, and the errors it ends a body with. */
export interface BodyGuard {
  /** Longest wait for the next bytes while a read is pending, in ms; `false` for none. */
  timeout: number | false;
  /** The caller's signal: its abort ends the body at once, even under a `fetch` that ignores it. */
  signal: AbortSignal | undefined;
  /** The error of a read that waited `timeout` ms for bytes. */
  idle: () => unknown;
  /** What a read that failed (connection cut, the signal) becomes. */
  failed: (cause: unknown) => unknown;
}

/**
 * Returns `res` with its body read through a stream that errors with
 * `guard.idle()` when a read waits `timeout` ms for the next bytes, and with
 * `guard.failed()` when the source fails or the signal aborts; either way
 * the source is cancelled, which closes its connection. The clock runs only
 * while a read waits on the source, so a slow consumer (a full disk, a busy
 * loop) is never taken for a stalled server. Per chunk it costs one timer
 * re-arm (`refresh()` in Node, which allocates nothing) and the read's own
 * promise. `url` and `redirected` are kept; a response without a body, or
 * with neither bound, is returned as it is.
 *
 * @example
 * ```ts
 * const guarded = guardBody(await fetch(url), { timeout: 30_000, signal, idle: () => new Error('stalled'), failed: (e) => e });
 * await guarded.arrayBuffer(); // rejects with 'stalled' when no bytes come for 30 s
 * ```
 */
export function guardBody(res: Response, guard: BodyGuard): Response {
  const { timeout, signal } = guard;
  if (res.body === null || (timeout === false && signal === undefined)) return res;
  const reader = res.body.getReader();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let waiting = false;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const end = (error?: unknown): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    if (error === undefined) return;
    controller.error(error);
    reader.cancel(error).catch(() => undefined);
  };
  const onAbort = () => end(guard.failed(signal?.reason));
  // Fires at most once per `timeout` after the last read began; a read that already got its bytes lets it pass.
  const expire = () => {
    if (waiting) end(guard.idle());
  };
  const arm =
    timeout === false
      ? () => undefined
      : () => {
          if (typeof timer === 'object') timer.refresh();
          else {
            clearTimeout(timer);
            timer = setTimeout(expire, timeout);
          }
        };
  // Made once, not per chunk.
  const onRead = (r: ReadableStreamReadResult<Uint8Array>) => {
    waiting = false;
    if (ended) return;
    if (r.done) {
      end();
      controller.close();
    } else controller.enqueue(r.value);
  };
  const onFail = (err: unknown) => {
    waiting = false;
    end(guard.failed(err));
  };

  signal?.addEventListener('abort', onAbort, { once: true });
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    pull() {
      waiting = true;
      arm();
      return reader.read().then(onRead, onFail);
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  if (signal?.aborted) onAbort();
  const out = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  // The constructor cannot set these; a caller may read where the body came from.
  Object.defineProperties(out, { url: { value: res.url }, redirected: { value: res.redirected } });
  return out;
}
