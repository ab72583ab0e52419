/**
 * Fetching a task's `generated` URLs: they live on another host and are read
 * without any credential, so the client's token, headers, hooks and cookies
 * never go along (not even through a redirect).
 *
 * @module
 */
import { APIConnectionError, APITimeoutError, APIUserAbortError, InvalidArgumentError } from '../errors.ts';
import { checkTimeout } from '../transport/options.ts';
import { redactUrl } from '../transport/redact.ts';
import type { Transport } from '../transport/transport.ts';

/** Options of `downloadResult()` and `downloadResultToFile()`. */
export interface DownloadResultOptions {
  /** Aborts the download. */
  signal?: AbortSignal;
  /** Timeout in ms until the response headers arrive (the body is the caller's: a large result takes its time), or `false`. Default 60000. */
  timeout?: number | false;
}

/** Checks a result URL: absolute http(s). The message never quotes it (it may be signed). */
export function checkResultUrl(url: unknown): URL {
  const u = (typeof url === 'string' || url instanceof URL) && URL.canParse(url) ? new URL(url) : undefined;
  if (!u || !/^https?:$/.test(u.protocol) || u.username || u.password) throw new InvalidArgumentError('must be an absolute http(s) URL without user name or password', 'url');
  return u;
}

/** A bare GET of a result URL: no header, no credential, redirects followed. */
export async function fetchResult(transport: Transport, url: string | URL, options: DownloadResultOptions = {}): Promise<Response> {
  const target = checkResultUrl(url);
  checkTimeout(options.timeout);
  if (options.signal?.aborted) throw new APIUserAbortError(undefined, { cause: options.signal.reason });
  const shown = redactUrl(target);
  const timeout = options.timeout ?? 60_000;
  // A timer cleared once the headers are in, so a long body is not cut off (AbortSignal.timeout would stay armed).
  const timer = new AbortController();
  const handle = timeout === false ? undefined : setTimeout(() => timer.abort(), timeout);
  const signal = options.signal ? AbortSignal.any([options.signal, timer.signal]) : timer.signal;
  let res: Response;
  try {
    // transport.fetch is the bare fetch (the caller's own, if given): no hooks, no default headers.
    // `credentials: 'omit'` keeps a browser's cookies home; redirects are followed with nothing added.
    res = await transport.fetch(target, { method: 'GET', credentials: 'omit', redirect: 'follow', signal });
  } catch {
    if (options.signal?.aborted) throw new APIUserAbortError(undefined, { cause: options.signal.reason });
    if (timer.signal.aborted) throw new APITimeoutError('GET', shown, timeout === false ? undefined : timeout);
    throw new APIConnectionError('GET', shown);
  } finally {
    clearTimeout(handle);
  }
  if (!res.ok) throw await transport.errorFromResponse(res, 'GET', shown);
  return res;
}
