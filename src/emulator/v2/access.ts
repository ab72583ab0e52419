/**
 * What every v2 request goes through first: the `rate_limited` fault, then
 * `Authorization: Bearer <key>` against the cloud's keys (401 `unauthorized`;
 * a key switched to `inactive` is 403 `forbidden`). Without `requireKey`
 * (`v2-real`, the proxy's default) no key is checked and everyone shares one
 * lane.
 *
 * @module
 */
import { bearerToken } from '../auth.ts';
import type { RequestContext } from '../http.ts';
import { V2Error } from './errors.ts';
import type { V2State } from './state.ts';

/** The caller's lane (its key, or the shared lane), after the rate limit and the key check. */
export function enter(state: V2State, ctx: RequestContext): string {
  if (state.faults.rateLimited > 0) {
    state.faults.rateLimited--;
    throw new V2Error(429, 'rate_limited', 'Too many requests; retry after the delay.', null, { 'Retry-After': String(state.faults.retryAfter) });
  }
  const cloud = state.cloud;
  const key = bearerToken(ctx) ?? '';
  if (!cloud.personality.requireKey) return cloud.laneOf(key);
  const mode = key ? cloud.keyMode(key) : undefined;
  if (!key || mode === undefined || mode === 'unauthorized') {
    throw new V2Error(401, 'unauthorized', key ? 'Invalid API key.' : 'Missing Authorization: Bearer <key>.', null, { 'WWW-Authenticate': 'Bearer' });
  }
  if (mode === 'inactive') throw new V2Error(403, 'forbidden', 'The subscription of this API key is not active.');
  return key;
}

/** 402 `insufficient_credits` for a key switched to `insufficient_credits` (submissions only). */
export function checkCredits(state: V2State, lane: string): void {
  if (state.cloud.keyMode(lane) === 'insufficient_credits') throw new V2Error(402, 'insufficient_credits', 'Insufficient credits to run this job; top up the account balance.');
}
