/**
 * The service's URL: the base URL checked once (never quoting a credential),
 * and a query appended the way the services read it.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import { fromEnv } from './options.ts';
import { clip, redactUrl } from './redact.ts';

/** Query values; `undefined` entries are left out, and an array becomes the key repeated (`statuses=A&statuses=B`). */
export type Query = Record<string, string | number | boolean | readonly (string | number)[] | undefined>;

/** Appends a query to search params: arrays as repeated keys (not ky's or `String()`'s comma join). */
export function appendQuery(params: URLSearchParams, query: Query): void {
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const one of v) params.append(k, String(one));
    else params.append(k, String(v));
  }
}

/**
 * The base URL from the options or the environment: absolute http(s), and
 * without user name or password (fetch refuses such URLs, and they would show
 * in messages). The message never quotes a URL that carries userinfo.
 */
export function checkBaseUrl(option: string | undefined, env: string): string {
  const value = option ?? fromEnv(env);
  const source = option === undefined && value !== undefined ? ` (from ${env})` : '';
  if (typeof value !== 'string' || value === '') {
    throw new InvalidArgumentError(`is required: pass it to the client or set ${env} in Node, got ${value === '' ? 'an empty string' : 'nothing'}`, 'baseUrl');
  }
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  // Checked on the text too, before anything quotes it: `user:pw@host` parses as scheme `user:`.
  const authority = value.replace(/^[a-z][a-z\d+.-]*:\/\//i, '').split(/[/?#]/)[0] ?? '';
  if (authority.includes('@') || (parsed && (parsed.username || parsed.password))) {
    throw new InvalidArgumentError(
      `must not contain a user name or password${source} (fetch cannot send them in a URL): pass the credential as an option or a header instead`,
      'baseUrl',
    );
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    // A malformed URL with an `@` may hold a password anywhere: neither echo it nor suggest a fix that would.
    if (value.includes('@')) throw new InvalidArgumentError(`must be an absolute http(s) URL${source} (the value is not shown: it contains "@")`, 'baseUrl');
    const fixed = !value.includes('://') && URL.canParse(`http://${value}`) ? new URL(`http://${value}`) : undefined;
    const hint = fixed?.hostname ? ` (did you mean ${JSON.stringify(redactUrl(fixed).replace(/\/$/, ''))}?)` : '';
    const shown = parsed ? redactUrl(parsed) : fixed ? redactUrl(fixed).slice('http://'.length).replace(/\/$/, '') : value;
    throw new InvalidArgumentError(`must be an absolute http(s) URL${source}, got ${JSON.stringify(clip(shown, 60))}${hint}`, 'baseUrl');
  }
  return value;
}
