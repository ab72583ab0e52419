/**
 * Fetching a task's `generated` URLs: they live on another host and are read
 * without any credential, so the client's token, headers, hooks and cookies
 * never go along (not even through a redirect).
 *
 * @module
 */
import { checkOptions, type OptionKeys } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { Transport } from '../transport/transport.ts';

/** Options of `downloadResult()` and `downloadResultToFile()`. */
export interface DownloadResultOptions {
  /** Aborts the download. */
  signal?: AbortSignal;
  /**
   * Timeout in ms until the response headers arrive, then for each wait for
   * the body's next bytes (a large result may take its time, but a body that
   * stops flowing fails with `APITimeoutError`), or `false`. Default: the
   * client's `timeout` (60000).
   */
  timeout?: number | false;
}

const DOWNLOAD_RESULT_OPTIONS = { signal: 1, timeout: 1 } as const satisfies OptionKeys<DownloadResultOptions>;

/** Checks a result URL: absolute http(s). The message never quotes it (it may be signed). */
export function checkResultUrl(url: unknown): URL {
  const u = (typeof url === 'string' || url instanceof URL) && URL.canParse(url) ? new URL(url) : undefined;
  if (!u || !/^https?:$/.test(u.protocol) || u.username || u.password) throw new InvalidArgumentError('must be an absolute http(s) URL without user name or password', 'url');
  return u;
}

/** A bare GET of a result URL: no header, no credential, redirects followed. */
export async function fetchResult(transport: Transport, url: string | URL, options: DownloadResultOptions = {}, where = 'downloadResult()'): Promise<Response> {
  checkOptions(options, DOWNLOAD_RESULT_OPTIONS, where);
  return transport.fetchElsewhere(checkResultUrl(url), options);
}
