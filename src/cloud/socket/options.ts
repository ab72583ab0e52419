/**
 * What `connect()` takes and checks before the socket's code loads: its
 * options, their check, and the socket's URL (the client's handle shows it
 * from the start). Kept apart from `socket.ts` so that a client that never
 * opens a socket does not load it (issue 34).
 *
 * @module
 */
import { checkOptions, type OptionKeys } from '../../args.ts';
import type { WebSocketConstructor } from '../../platform/types.ts';

/** Options of `CloudSocket` (`connect()`'s options). */
export interface CloudSocketOptions {
  /** A WebSocket implementation. Defaults to the runtime's global one, else `ws` in Node. */
  WebSocket?: WebSocketConstructor;
  /**
   * Reconnect backoff. Attempt `n` (failed attempts in a row) waits a random
   * delay between half and all of `min(maxDelay, baseDelay · 2^(n-1))` ms:
   * `baseDelay` 500 and `maxDelay` 10000 by default. A connection that closes
   * within 5 s of opening is a failed attempt too (the delay keeps growing).
   * `maxAttempts`: failed attempts in a row before giving up (`Infinity` by default).
   * A close code by which the server refuses the socket (1008, 4000–4999) ends
   * the retries at once: see the `close` event.
   */
  reconnect?: { baseDelay?: number; maxDelay?: number; maxAttempts?: number };
  /** With jobs being followed, a socket silent this long (ms) is presumed dead and reopened. Default 30000. */
  idleTimeout?: number;
  /**
   * How long (ms) events of jobs nobody has subscribed to are held for a later
   * subscriber (a job's first events can beat its submit response; every socket
   * of an account also sees the account's other jobs). Default 5000. The hold is
   * also bounded to about 1 MiB of message text; a subscriber whose job lost
   * held events to either bound is told through `onLost`.
   */
  holdFor?: number;
  /** Client id sent as `clientId`; generated once per socket and kept across reconnects. */
  clientId?: string;
  /** Feature flags announced as the first message. */
  featureFlags?: Record<string, unknown>;
}

const SOCKET_OPTIONS = { WebSocket: 1, reconnect: 1, idleTimeout: 1, holdFor: 1, clientId: 1, featureFlags: 1 } as const satisfies OptionKeys<CloudSocketOptions>;
const RECONNECT_OPTIONS = { baseDelay: 1, maxDelay: 1, maxAttempts: 1 } as const satisfies OptionKeys<NonNullable<CloudSocketOptions['reconnect']>>;

/** Refuses an unknown key of {@link CloudSocketOptions} or of its `reconnect` (`connect()`'s options), naming the closest. */
export function checkSocketOptions(options: CloudSocketOptions | undefined): void {
  checkOptions(options, SOCKET_OPTIONS, 'connect()');
  checkOptions(options?.reconnect, RECONNECT_OPTIONS, 'reconnect', 'reconnect.');
}

/**
 * The socket's URL: `/ws` under the base URL, `ws:` for `http:` and `wss:`
 * otherwise, with `clientId` and, when given, `token`.
 *
 * @example
 * ```ts
 * socketUrl('https://cloud.example.com/base', 'c1', undefined); // 'wss://cloud.example.com/base/ws?clientId=c1'
 * ```
 */
export function socketUrl(baseUrl: string, clientId: string, token: string | undefined): string {
  const u = new URL('ws', `${baseUrl.replace(/\/+$/, '')}/`);
  u.protocol = u.protocol === 'http:' ? 'ws:' : 'wss:';
  u.searchParams.set('clientId', clientId);
  if (token !== undefined) u.searchParams.set('token', token);
  return u.toString();
}
