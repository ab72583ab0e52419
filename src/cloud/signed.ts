/**
 * The answer of a download route that may redirect to a signed URL (v1's
 * `/api/view`, v2's `/assets/{id}/content`), read one way for every kind of
 * server: bytes from the service itself are returned as they are; a redirect
 * is followed by hand, to https (or plain http on loopback) only, with no
 * credential at all (fetch would forward the key to it).
 *
 * @module
 */
import { DownloadError } from '../errors.ts';
import type { RequestOptions } from '../transport/options.ts';
import type { Transport } from '../transport/transport.ts';

/** Loopback hosts, where a signed URL may be plain http (a local server, the emulator). */
export const isLoopback = (host: string): boolean => host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);

/**
 * `res` (a manual-redirect answer of `route`, as shown to users) as the file:
 * itself when 2xx, else the signed URL its `location` names, fetched with
 * nothing of the client. {@link DownloadError} for an opaque redirect (a
 * browser's), a missing `location`, or an insecure one.
 *
 * @example
 * ```ts
 * const res = await transport.send({ method: 'GET', path: 'api/view', query, auth: true, redirect: 'manual' });
 * return followSigned(transport, res, '/api/view', new URL(`${transport.baseUrl}/api/view`));
 * ```
 */
export async function followSigned(transport: Transport, res: Response, route: string, from: URL, options: RequestOptions = {}): Promise<Response> {
  if (res.status >= 200 && res.status < 300) return res;
  if (res.type === 'opaqueredirect' || res.status === 0) {
    throw new DownloadError('opaque_redirect', `The ${route} redirect is opaque in this runtime (browsers hide manual redirects); the signed URL cannot be read without forwarding the API key`);
  }
  const location = res.headers.get('location');
  await res.body?.cancel();
  if (!location) throw new DownloadError('missing_location', `${route} answered ${res.status} without a location`);
  const target = new URL(location, from);
  if (target.protocol !== 'https:' && !(target.protocol === 'http:' && isLoopback(target.hostname))) {
    throw new DownloadError('insecure_location', `Refusing to fetch a signed URL over ${target.protocol} on ${target.host}`);
  }
  // Nothing of the client goes along: no hooks, no default headers, no cookies.
  return transport.fetchElsewhere(target, options);
}
