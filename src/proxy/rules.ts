/**
 * The proxy's request rules that a type cannot express, checked before any
 * request so a job is never started (and billed) with arguments the service
 * would refuse.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;
// `(text:weight)`: the innermost parentheses holding a colon.
const EMPHASIS = /\(([^()]*):([^():]*)\)/g;

/** Every `(text:weight)` in a prompt must weigh from 1 to 1.4 inclusive. */
export function checkPromptWeights(prompt: string | undefined): void {
  if (prompt === undefined) return;
  for (const m of prompt.matchAll(EMPHASIS)) {
    const raw = m[2]!.trim();
    if (!NUMBER.test(raw)) continue; // "(note: see above)" is prose, not emphasis
    const weight = Number(raw);
    if (weight < 1 || weight > 1.4) {
      const at = m[0].length > 40 ? `${m[0].slice(0, 39)}…` : m[0];
      throw new InvalidArgumentError(`every (text:weight) must weigh from 1 to 1.4, got ${raw} in "${at}"`, 'prompt');
    }
  }
}

/** `webhook_url` must be an absolute http(s) URL. */
export function checkWebhookUrl(url: string | undefined): void {
  if (url === undefined) return;
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    // A webhook URL may carry a token: show what kind of string it is, not the string.
    const got = u ? `a URL with scheme ${u.protocol}` : url.startsWith('/') ? 'a relative path' : url === '' ? 'an empty string' : 'a string that is not a URL';
    throw new InvalidArgumentError(`must be an absolute http(s) URL, got ${got}`, 'webhook_url');
  }
}

/** At most one of two mutually exclusive fields. */
export function checkExclusive(params: object, a: string, b: string): void {
  const p = params as Record<string, unknown>;
  if (p[a] !== undefined && p[b] !== undefined) throw new InvalidArgumentError(`cannot be combined with ${a}; give one or the other`, b);
}
