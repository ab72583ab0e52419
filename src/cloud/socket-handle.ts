/**
 * What `connect()` returns at once, while the socket's code loads
 * (`realtime.ts`): a handle with every public member of `CloudSocket`, whose
 * socket attaches once loaded. Listeners, job subscriptions and iterators
 * asked for before then attach first thing, before the socket connects, so no
 * event is missed; `ready()`, `once()` wait for the load; `close()` before it
 * closes for good at once, as a socket closed while connecting does. After the
 * load every member is the socket's own, and a handle made once the code has
 * loaded (every socket but a process's first) starts its socket at once. `connect()` stays synchronous and
 * keeps its type, and a client that never connects never loads the socket.
 *
 * @module
 */
import { PlatformUIError } from '../errors.ts';
import { SILENT, type Log } from '../transport/log.ts';
import { redactUrl } from '../transport/redact.ts';
import type { CloudSocket, CloudSocketEvents, SocketEvent, SocketState, SocketTarget } from './socket.ts';
import { socketUrl, type CloudSocketOptions } from './socket/options.ts';
import { randomUuid } from './uuid.ts';

/** Every public member of `CloudSocket` (the class's private fields make its own type nominal). */
type SocketMembers = { [K in keyof CloudSocket]: CloudSocket[K] };

/** The socket class (`realtime()`'s `CloudSocket`): at once when its code has loaded already, else once it has. */
export type LoadSocket = () => typeof CloudSocket | Promise<typeof CloudSocket>;

/**
 * A `CloudSocket` whose code loads on first use.
 *
 * @example
 * ```ts
 * const socket = new SocketHandle(() => realtime().then((m) => m.CloudSocket), target, options);
 * socket.on('status', (m) => console.log(m.data));
 * const real = await socket.loaded(); // the CloudSocket itself
 * ```
 */
export class SocketHandle implements SocketMembers {
  readonly clientId: string;
  #target: SocketTarget;
  #socket: CloudSocket | undefined;
  #loading: Promise<CloudSocket>;
  /** What to do on the socket as soon as it exists: listeners and subscriptions asked for meanwhile. */
  #pending = new Set<(socket: CloudSocket) => void>();
  /** The `close` event of a handle closed before its socket loaded (then no socket is ever made). */
  #closed: CloudSocketEvents['close'] | undefined;
  #closeListeners = new Set<(event: CloudSocketEvents['close']) => void>();
  #log: Log;

  constructor(load: LoadSocket, target: SocketTarget, options: CloudSocketOptions = {}) {
    this.clientId = options.clientId ?? randomUuid();
    this.#target = target;
    this.#log = target.log ?? SILENT;
    const make = (Socket: typeof CloudSocket): CloudSocket => {
      if (this.#closed) throw this.#closedError();
      const socket = (this.#socket = new Socket(target, { ...options, clientId: this.clientId }));
      for (const attach of this.#pending) attach(socket);
      this.#pending.clear();
      this.#closeListeners.clear();
      return socket;
    };
    const Socket = load();
    // Loaded already (every socket after the first): the socket starts now, as it did before it loaded lazily.
    if (typeof Socket === 'function') {
      this.#loading = Promise.resolve(make(Socket));
      return;
    }
    this.#loading = Socket.then(
      make,
      (error: unknown) => {
        // The chunk did not load (a browser offline): the socket is closed for good, as one that gave up.
        this.#shutdown({ code: undefined, reason: 'the socket could not be loaded' });
        throw error;
      },
    );
    this.#loading.catch(() => undefined);
  }

  /** The socket itself, once its code has loaded; rejects when this handle was closed first. */
  loaded(): Promise<CloudSocket> {
    return this.#loading;
  }

  /** The socket URL with the token redacted. */
  get url(): string {
    const t = this.#target;
    return this.#socket?.url ?? redactUrl(socketUrl(t.baseUrl, this.clientId, t.hasCredential ? '[REDACTED]' : undefined));
  }

  get state(): SocketState {
    return this.#socket?.state ?? (this.#closed ? 'closed' : 'connecting');
  }

  get listenerCount(): number {
    return this.#socket?.listenerCount ?? this.#pending.size;
  }

  get held(): CloudSocket['held'] {
    return this.#socket?.held ?? { jobs: 0, events: 0, bytes: 0 };
  }

  ready(signal?: AbortSignal): Promise<void> {
    return this.#loading.then((s) => s.ready(signal));
  }

  on: CloudSocket['on'] = (type, handler) => {
    if (this.#socket) return this.#socket.on(type, handler);
    if (type === 'close') this.#closeListeners.add(handler as (e: CloudSocketEvents['close']) => void);
    return this.#later((s) => s.on(type, handler), () => this.#closeListeners.delete(handler as never));
  };

  once: CloudSocket['once'] = (type, signal) => {
    if (this.#socket) return this.#socket.once(type, signal);
    const closed = this.#closed;
    if (closed && type === 'close') return Promise.resolve(closed as never);
    return this.#loading.then(
      (s) => s.once(type, signal),
      (error: unknown) => (type === 'close' && this.#closed ? (this.#closed as never) : Promise.reject(error)),
    );
  };

  subscribe(promptId: string, handler: (event: SocketEvent) => void, options?: { onLost?: () => void }): () => void {
    if (this.#socket) return this.#socket.subscribe(promptId, handler, options);
    return this.#later((s) => s.subscribe(promptId, handler, options));
  }

  events(options: { promptId?: string; bufferSize?: number; signal?: AbortSignal } = {}): AsyncIterableIterator<SocketEvent> {
    if (this.#socket || this.#closed) return this.#socket?.events(options) ?? this.#endedIterator();
    let inner: AsyncIterableIterator<SocketEvent> | undefined;
    let left = false;
    const cancel = this.#later((s) => void (inner = s.events(options)));
    const attached = this.#loading.then(
      () => inner,
      () => undefined,
    );
    const it: AsyncIterableIterator<SocketEvent> = {
      next: async () => {
        const i = await attached;
        return i && !left ? i.next() : { value: undefined, done: true };
      },
      return: async () => {
        left = true;
        cancel();
        return (await attached)?.return?.() ?? { value: undefined, done: true };
      },
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }

  close(reason = 'closed by client'): void {
    if (this.#socket) return this.#socket.close(reason);
    this.#shutdown({ code: 1000, reason });
  }

  /** Closed before the socket exists: tell the `close` listeners, as the socket would, and forget everything. */
  #shutdown(event: CloudSocketEvents['close']): void {
    if (this.#closed) return;
    this.#closed = event;
    this.#pending.clear();
    this.#log.debug?.(`socket closed: ${event.reason}`, { code: event.code, reason: event.reason });
    for (const listener of [...this.#closeListeners]) {
      try {
        listener(event);
      } catch {
        // a close listener's failure stops nothing: the socket's own close swallows it too
      }
    }
    this.#closeListeners.clear();
  }

  /** Does `attach` on the socket once it exists; returns what undoes it, before or after. */
  #later(attach: (socket: CloudSocket) => (() => void) | void, forget?: () => void): () => void {
    let undo: (() => void) | void;
    const op = (s: CloudSocket) => void (undo = attach(s));
    this.#pending.add(op);
    return () => {
      this.#pending.delete(op);
      forget?.();
      if (typeof undo === 'function') undo();
    };
  }

  #closedError(): PlatformUIError {
    return new PlatformUIError('Socket is closed');
  }

  #endedIterator(): AsyncIterableIterator<SocketEvent> {
    const it: AsyncIterableIterator<SocketEvent> = {
      next: async () => ({ value: undefined, done: true }),
      return: async () => ({ value: undefined, done: true }),
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }
}
