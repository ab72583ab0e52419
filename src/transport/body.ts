/**
 * A streamed response body with an idle timeout. The per-attempt timeout
 * ends when the headers arrive (a large body takes its time), so without
 * this a body that stops flowing would hold its reader forever: a download,
 * a signed URL, a proxy result, the CLI's `--out`.
 *
 * @module
 */

/** What {@link guardBody} needs: the bound, and the errors it ends a body with. */
export interface BodyGuard {
  /** Longest wait for the next bytes while a read is pending, in ms; `false` for none. */
  timeout: number | false;
  /** The error of a read that waited `timeout` ms for bytes. */
  idle: () => unknown;
  /** What a read that failed (a cut connection, the caller's abort) becomes. */
  failed: (cause: unknown) => unknown;
}

/**
 * Returns `res` with its body read through a stream that errors with
 * `guard.idle()` when a read waits `timeout` ms for the next bytes (and then
 * cancels the source, which closes its connection), and with
 * `guard.failed()` when the source fails (the caller's signal ends the
 * source: the request was sent with it). The clock runs only while a read
 * waits on the source, so a slow consumer (a full disk, a busy loop) is
 * never taken for a stalled server. Per chunk it costs one timer re-arm
 * (`refresh()` in Node, which allocates nothing) and the promises of the
 * read itself; no closure. `url` and `redirected` are kept; a response
 * without a body is returned as it is.
 *
 * @example
 * ```ts
 * const guarded = guardBody(await fetch(url, { signal }), { timeout: 30_000, idle: () => new Error('stalled'), failed: (e) => e });
 * await guarded.arrayBuffer(); // rejects with 'stalled' when no bytes come for 30 s
 * ```
 */
export function guardBody(res: Response, guard: BodyGuard): Response {
  const { timeout } = guard;
  if (res.body === null) return res;
  const reader = res.body.getReader();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let waiting = false;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const end = (error?: unknown): void => {
    ended = true;
    clearTimeout(timer);
    if (error === undefined) return;
    controller.error(error);
    reader.cancel(error).catch(() => undefined);
  };
  // Fires at most once per `timeout` after the last read began; a read that already got its bytes lets it pass.
  const expire = () => waiting && end(guard.idle());
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
    if (!ended) end(guard.failed(err));
  };

  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    pull() {
      waiting = true;
      // refresh() moves Node's timer without making another; a browser's timer is a number.
      if (typeof timer === 'object') timer.refresh();
      else if (timeout !== false) {
        clearTimeout(timer);
        // Unref'd: a body left unread must not keep a process alive (a pending read keeps its socket, and so the process, alive).
        timer = setTimeout(expire, timeout);
        (timer as { unref?: () => void }).unref?.();
      }
      return reader.read().then(onRead, onFail);
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  const out = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  // The constructor cannot set these; a caller may read where the body came from.
  Object.defineProperties(out, { url: { value: res.url }, redirected: { value: res.redirected } });
  return out;
}
