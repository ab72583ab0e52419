/**
 * The socket's public shapes: its events, options and states, apart from the
 * class (`../socket.ts`) so that the modules it is made of (routing, the
 * event iterator) and type-only readers share them without the class.
 *
 * @module
 */
import type { SocketRefusedError } from '../../errors.ts';
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
