/**
 * Keeps secrets out of anything shown to users: URLs in errors and logs, and
 * response bodies that echo a credential back.
 *
 * @module
 */

// Credentials and signed-URL capabilities: token, api_key, key, sig, signature,
// X-Amz-Signature, X-Amz-Security-Token, X-Amz-Credential, X-Goog-Signature, X-Goog-Credential, …
const SECRET_PARAMS = /(token|key|sig|signature|credential|secret|password|auth)$/i;

/** Placeholder that replaces a secret. */
export const REDACTED = '[REDACTED]';

/**
 * The URL with its password and any secret-bearing query value replaced.
 *
 * @example
 * ```ts
 * redactUrl('wss://h/ws?clientId=a&token=sk-123'); // 'wss://h/ws?clientId=a&token=[REDACTED]'
 * ```
 */
export function redactUrl(url: string | URL): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return REDACTED;
  }
  if (u.password) u.password = REDACTED;
  for (const name of [...u.searchParams.keys()]) {
    if (SECRET_PARAMS.test(name)) u.searchParams.set(name, REDACTED);
  }
  // URLSearchParams percent-encodes the brackets; put them back for readability.
  return u.toString().replaceAll('%5BREDACTED%5D', REDACTED);
}

/**
 * Replaces every occurrence of the given secrets in a value that may be shown
 * (a body a server echoed, an error message). Returns the value unchanged when
 * no secret occurs in it.
 */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  const live = secrets.filter((s) => s.length >= 4);
  if (live.length === 0 || value === undefined || value === null) return value;
  if (typeof value === 'string') return live.reduce((s, secret) => s.replaceAll(secret, REDACTED), value as string) as T;
  if (typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  if (!live.some((s) => text.includes(s))) return value;
  try {
    return JSON.parse(live.reduce((t, secret) => t.replaceAll(JSON.stringify(secret).slice(1, -1), REDACTED), text)) as T;
  } catch {
    return REDACTED as T;
  }
}
