/**
 * Keeps secrets out of anything shown to users: URLs in errors and logs, and
 * response bodies that echo a credential back.
 *
 * @module
 */

// Credentials and signed-URL capabilities: token, api_key, key, sig, signature,
// X-Amz-Signature, X-Amz-Security-Token, X-Amz-Credential, X-Goog-Signature, X-Goog-Credential,
// password, passwd, client_secret, auth, session_id, access_token_v2, … A word of the
// name (split at `-`, `_`, `.` and camelCase) is one of these, or the name ends in one.
const SECRET_WORDS = new Set(['token', 'key', 'apikey', 'code', 'otp', 'passphrase', 'sig', 'signature', 'credential', 'credentials', 'secret', 'password', 'passwd', 'pwd', 'pass', 'auth', 'authorization', 'session', 'sessionid', 'jwt', 'bearer']);
const SECRET_SUFFIX = /(token|key|sig|signature|credential|secret|password|auth)$/i;
const isSecretParam = (name: string) =>
  SECRET_SUFFIX.test(name) || name.replace(/([a-z\d])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z\d]+/).some((w) => SECRET_WORDS.has(w));

/** `text` cut to `max` characters, the last one an ellipsis when it was longer. */
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Placeholder that replaces a secret. */
export const REDACTED = '[REDACTED]';

/**
 * The URL with its user name, password, fragment and any secret-bearing
 * query value replaced.
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
  if (u.username) u.username = REDACTED;
  if (u.password) u.password = REDACTED;
  // A fragment can carry a token (OAuth's implicit flow) and is never sent to a server anyway.
  if (u.hash) u.hash = REDACTED;
  for (const name of [...u.searchParams.keys()]) {
    if (isSecretParam(name)) u.searchParams.set(name, REDACTED);
  }
  // URLSearchParams percent-encodes the brackets; put them back for readability.
  return u.toString().replaceAll('%5BREDACTED%5D', REDACTED);
}

/**
 * Free text (an error message a runtime or a custom `fetch` wrote, a close
 * reason a server sent) with every URL in it redacted by {@link redactUrl}
 * and a stray `token=…` masked, cut to `max` characters.
 */
export function redactText(text: string, max = 200): string {
  const shown = text.replace(/\b[a-z][a-z\d+.-]*:\/\/[^\s'"<>`]+/gi, (u) => redactUrl(u)).replace(/(token|key|sig|signature)=[^&\s'"]+/gi, `$1=${REDACTED}`);
  return clip(shown, max);
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
