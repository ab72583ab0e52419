/**
 * The socket's public shapes: its events, options and states, apart from the
 * class (`../socket.ts`) so that the modules it is made of (routing, the
 * event iterator) and type-only readers share them without the class.
 *
 * @module
 */
import { checkOptions, type OptionKeys } from '../../args.ts';
import type { SocketRefusedError } from '../../errors.ts';
import type { WebSocketConstructor } from '../../platform/types.ts';
import type { Log } from '../../transport/log.ts';
import type { PreviewFrame } from '../frames.ts';
import type { CloudMessage } from '../messages.ts';

/** A decoded binary frame, as delivered by the socket. */
export interface BinaryEvent {
  type: 'binary';
  frame: PreviewFrame;
  /** The job the frame belongs to: from type-4 metadata, else the job that last reported progress. */
  promptId: string | undefined;
}

/** Everything a job subscriber can receive. */
export type SocketEvent = CloudMessage | BinaryEvent;

/** Lifecycle and data events of {@link CloudSocket}, by name. */
export interface CloudSocketEvents {
  /** Every JSON message (known, unknown or malformed). */
  message: CloudMessage;
  /** Every binary frame. */
  binary: BinaryEvent;
  /** The socket opened (first time and after every reconnect). */
  open: { reconnect: boolean };
  /** The socket dropped and will try again after `delay` ms (`attempt`: failed attempts in a row, this drop included). */
  reconnecting: { attempt: number; delay: number; code: number | undefined };
  /** The socket is back after a drop. Jobs reconcile by polling now. */
  reconnected: { attempt: number };
  /**
   * The socket closed for good: `close()` was called, reconnecting gave up
   * (`maxAttempts`), or the server refused it. A refusal (close code 1008, or
   * 4000–4999 from the server) carries `error`, a {@link SocketRefusedError}.
   */
  close: { code: number | undefined; reason: string | undefined; error?: SocketRefusedError };
  /**
   * A failure: a handler threw, a frame did not decode, a connect attempt
   * failed; or one that stops the socket (`close` follows): the server refused
   * it ({@link SocketRefusedError}), or reconnecting gave up.
   */
  error: { error: unknown };
}

/** Options of {@link CloudSocket}. */
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

/** Internal: what the client hands the socket. */
export interface SocketTarget {
  baseUrl: string;
  /** The `token` query value; `undefined` connects without one (a local server). */
  credential(): Promise<string | undefined>;
  /** Whether a token will be sent (so `url` shows it redacted). */
  hasCredential: boolean;
  /** The client's log; none by default. */
  log?: Log;
}

/**
 * `connecting` (the first connection), `open`, `reconnecting` (waiting for or
 * making another attempt after a drop) and `closed` (for good).
 */
export type SocketState = 'connecting' | 'open' | 'reconnecting' | 'closed';
/** A listener of one event type. */
export type Handler<T> = (event: T) => void;
/** Everything `on()` accepts: a lifecycle or data event name, or a message type. */
export type Named = keyof CloudSocketEvents | CloudMessage['type'];
/** The payload `on(K)` delivers. */
export type EventOf<K> = K extends keyof CloudSocketEvents ? CloudSocketEvents[K] : Extract<CloudMessage, { type: K }>;
