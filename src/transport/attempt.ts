/**
 * One attempt of a request: one fetch (between the hooks, when the client
 * has any) under the per-attempt timeout, and what its failures are before
 * they become SDK errors (`to-error.ts`): an answer of the wrong status, no
 * answer in time, a failed connection.
 *
 * @module
 */
import type { APIError } from '../errors.ts';
import type { Hooks } from './options.ts';

/**
 * One fetch with the hooks around it, under the per-attempt timeout. The
 * timeout covers the body too when it is read here (a JSON answer, or an
 * error's body for its message); a streamed body (`send`) has an idle
 * timeout instead (the transport's `#guard`).
 * It holds even against a `fetch` (or hook) that ignores the signal.
 */
export async function tryOnce(url: string, init: RequestInit, fetchFn: typeof globalThis.fetch, a: Attempt): Promise<{ response: Response; text: string }> {
  const timer = new AbortController();
  // Composed, not forwarded by a listener: a caller's signal lives across many calls and must not collect one per attempt.
  const signal = a.signal ? AbortSignal.any([a.signal, timer.signal]) : timer.signal;
  let expired: () => void = () => undefined;
  const timedOut = new Promise<never>((_, reject) => {
    expired = () => {
      timer.abort();
      reject(new AttemptTimeout());
    };
  });
  timedOut.catch(() => undefined);
  let handle = a.timeout === false ? undefined : setTimeout(expired, a.timeout);
  const withTimeout = <T>(p: Promise<T>) => (handle === undefined ? p : Promise.race([p, timedOut]));
  try {
    const withSignal = { ...init, signal };
    // Without hooks, fetch is awaited directly: every extra tick before the body is read lets undici pause the socket.
    const response = await withTimeout(a.hooks ? fetchWithHooks(a.hooks, url, withSignal, fetchFn, a.retryCount) : network(fetchFn(url, withSignal)));
    if (a.ok(response.status)) return { response, text: a.read ? await withTimeout(network(response.text())) : '' };
    // An error body is read for its message, bounded even without a timeout, and never fails the call.
    handle ??= setTimeout(expired, 10_000);
    return { response, text: await withTimeout(response.text()).catch(() => '') };
  } finally {
    clearTimeout(handle);
  }
}

/** fetch between the `beforeRequest` and `afterResponse` hooks; a `beforeRequest` hook's Response stands for the answer. */
async function fetchWithHooks(hooks: Hooks, url: string, init: RequestInit, fetchFn: typeof globalThis.fetch, retryCount: number): Promise<Response> {
  let request = new Request(url, init);
  let response: Response | undefined;
  for (const hook of hooks.beforeRequest ?? []) {
    const r = await hook({ request, retryCount });
    if (r instanceof Response) {
      response = r;
      break;
    }
    if (r instanceof Request) request = r;
  }
  response ??= await network(fetchFn(request));
  // Each hook sees a clone, so one that reads the body (to log it) leaves it for the SDK.
  for (const hook of hooks.afterResponse ?? []) {
    const copy: Response = response.clone();
    const r = await hook({ request, response: copy, retryCount });
    // A clone nobody reads would keep every byte of the body (its tee buffers for the slower
    // branch), and cancelling the SDK's branch would wait for it forever (a redirect's body, a
    // download dropped): released once the hook has not started reading it.
    if (r !== copy && !copy.bodyUsed && copy.body && !copy.body.locked) copy.body.cancel().catch(() => {});
    if (r instanceof Response) response = r;
  }
  return response;
}

/** A non-2xx answer, with its body read (JSON when it is JSON), on its way to becoming an {@link APIError}. */
export class HttpFailure extends Error {
  constructor(
    readonly response: Response,
    readonly body: unknown,
  ) {
    super(`HTTP ${response.status}`);
  }
}

/** The per-attempt timeout fired (before the headers came, or while reading a body read in the attempt). */
export class AttemptTimeout extends Error {}

/** fetch itself failed (connection refused, reset, a body cut off): worth retrying. */
export class NetworkFailure extends Error {
  constructor(readonly cause: unknown) {
    super('network failure');
  }
}

/** Marks what fetch (or reading its body) rejects with as a {@link NetworkFailure}. */
function network<T>(p: Promise<T>): Promise<T> {
  return p.catch((err: unknown) => {
    // An abort is not the network's fault; the caller's signal or the timer decide what it was.
    throw err instanceof Error && err.name === 'AbortError' ? err : new NetworkFailure(err);
  });
}

/** What one attempt needs to know. */
export interface Attempt {
  /** The client's hooks, when it has any. */
  hooks: Hooks | undefined;
  signal: AbortSignal | undefined;
  timeout: number | false;
  retryCount: number;
  ok: (status: number) => boolean;
  read: boolean;
}

/** An error body: JSON when it parses, else the text; `undefined` when empty. */
export function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
