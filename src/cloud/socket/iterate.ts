/**
 * `CloudSocket.events()`: a socket's events as an async iterator with a
 * bounded buffer, built on the socket's public `on` and `subscribe`.
 *
 * @module
 */
import type { CloudMessage } from '../messages.ts';
import type { BinaryEvent, Handler, SocketEvent, SocketState } from './types.ts';

/** What the iterator needs of a socket. */
export interface EventSource {
  readonly state: SocketState;
  on(type: 'message', handler: Handler<CloudMessage>): () => void;
  on(type: 'binary', handler: Handler<BinaryEvent>): () => void;
  on(type: 'close', handler: Handler<unknown>): () => void;
  subscribe(promptId: string, handler: Handler<SocketEvent>): () => void;
}

/** Options of `CloudSocket.events()`. */
export interface EventsOptions {
  promptId?: string;
  bufferSize?: number;
  signal?: AbortSignal;
}

/**
 * Every event of `socket` (or of one job), oldest dropped once `bufferSize`
 * (default 1024) wait unread; ends when the socket closes, the signal aborts,
 * or the consumer leaves the loop.
 *
 * @example
 * ```ts
 * for await (const e of eventIterator(socket, { promptId })) console.log(e.type);
 * ```
 */
export function eventIterator(socket: EventSource, options: EventsOptions = {}): AsyncIterableIterator<SocketEvent> {
  const max = options.bufferSize ?? 1024;
  const queue: SocketEvent[] = [];
  const waiters: Array<() => void> = [];
  const signal = options.signal;
  let done = socket.state === 'closed' || signal?.aborted === true;
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const push = (e: SocketEvent) => {
    if (queue.length >= max) queue.shift();
    queue.push(e);
    wake();
  };
  const offs: Array<() => void> = [];
  const finish = () => {
    done = true;
    for (const off of offs.splice(0)) off();
    signal?.removeEventListener('abort', finish);
    wake();
  };
  if (!done) {
    if (options.promptId) offs.push(socket.subscribe(options.promptId, push));
    else offs.push(socket.on('message', push), socket.on('binary', push));
    offs.push(socket.on('close', finish));
    signal?.addEventListener('abort', finish, { once: true });
  }
  const it: AsyncIterableIterator<SocketEvent> = {
    next: async () => {
      while (queue.length === 0 && !done) await new Promise<void>((r) => waiters.push(r));
      const value = queue.shift();
      return value ? { value, done: false } : { value: undefined, done: true };
    },
    return: async () => {
      queue.length = 0; // the consumer left: nothing more is delivered
      finish();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => it,
  };
  return it;
}
