/**
 * The "waiting for …" line of a terminal: when a request has had no answer
 * for a second and nothing else was written meanwhile, one line on standard
 * error says what the command waits for (`waiting for
 * http://127.0.0.1:8787 (GET /api/queue)… 3s`), updated every second and
 * erased as soon as the answer comes or anything else is written. A server
 * that accepts connections and never answers no longer looks like a hung
 * command. Only on a terminal and never with `--json` (`Context` decides).
 *
 * A request is seen when it starts through the clients' `beforeRequest`
 * hook, and when it ends (answered, failed, timed out or aborted) through
 * the debug line the transport logs for every attempt (`Context` routes it
 * here). Not through a `fetch` of our own, which would replace the SDK's
 * upload path, nor an `afterResponse` hook, whose clone of every response
 * would hold a download's body in memory.
 *
 * @module
 */
import type { Hooks } from '../index.ts';
import type { LogDetails } from '../transport/log.ts';
import type { Writer } from './context.ts';

/** How long a request waits, with nothing written, before the line appears. */
const QUIET_MS = 1000;
const ERASE = '\r\x1b[K';

interface Pending {
  /** `http://127.0.0.1:8787 (GET /api/queue)`: no query (it may hold a token), no credentials. */
  what: string;
  since: number;
}

/** What a request is waiting for, as the line says it; `undefined` for what is not a URL. */
function describe(method: unknown, url: unknown): string | undefined {
  if (typeof method !== 'string' || typeof url !== 'string' || !URL.canParse(url)) return undefined;
  const u = new URL(url);
  return `${u.origin} (${method} ${u.pathname})`;
}

/** The line for one terminal; {@link close} erases it for good. */
export class WaitNotice {
  readonly #out: Writer;
  readonly #style: (text: string) => string;
  /** The requests under way, oldest first. */
  readonly #pending: Pending[] = [];
  #lastWrite = Date.now();
  #shown = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  /** The clients' hook that reports each request as it starts. */
  readonly hooks: Hooks = { beforeRequest: [({ request }) => this.#started(request)] };

  /**
   * @param out Where the line goes: a terminal's standard error.
   * @param style Dims the line when colours are on.
   */
  constructor(out: Writer, style: (text: string) => string = (t) => t) {
    this.#out = out;
    this.#style = style;
  }

  /**
   * A line of the clients' debug log: the one the transport writes as each
   * attempt ends (`GET … → 200 in 12 ms`, with `requestId` and `durationMs`)
   * ends the wait for that request. Other lines are ignored.
   */
  logged(details: LogDetails | undefined): void {
    if (details?.requestId === undefined || details.durationMs === undefined) return;
    const what = describe(details.method, details.url);
    const at = this.#pending.findIndex((p) => p.what === what);
    if (at < 0) return;
    this.#pending.splice(at, 1);
    this.#erase();
    this.#schedule();
  }

  /** `w`, erasing the line before each write: the command's own output takes its place. */
  wrap(w: Writer): Writer {
    const write = (text: string) => {
      this.#erase();
      this.#lastWrite = Date.now();
      return w.write(text);
    };
    return {
      write,
      get isTTY() {
        return w.isTTY;
      },
      get columns() {
        return w.columns;
      },
    };
  }

  /** Erases the line and stops watching. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#erase();
  }

  #started(request: Request): void {
    const what = describe(request.method, request.url);
    if (what === undefined) return;
    this.#pending.push({ what, since: Date.now() });
    this.#schedule();
  }

  /** Shows or updates the line when it is due, and comes back when the next change is. */
  #schedule(): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    const now = Date.now();
    const oldest = this.#pending[0];
    if (!oldest) return this.#erase();
    const due = Math.max(this.#lastWrite, oldest.since) + QUIET_MS;
    if (now >= due) this.#show(oldest, now);
    // Every second while shown (its seconds count up), else when the quiet second is over.
    this.#timer = setTimeout(() => this.#schedule(), now >= due ? QUIET_MS - ((now - oldest.since) % QUIET_MS) : due - now);
    this.#timer.unref?.();
  }

  #show(p: Pending, now: number): void {
    const width = Math.max(20, (this.#out.columns || 80) - 1);
    const text = `waiting for ${p.what}… ${Math.floor((now - p.since) / 1000)}s`;
    this.#out.write(`${ERASE}${this.#style(text.length > width ? `${text.slice(0, width - 1)}…` : text)}`);
    this.#shown = true;
  }

  #erase(): void {
    if (!this.#shown) return;
    this.#shown = false;
    this.#out.write(ERASE);
  }
}
