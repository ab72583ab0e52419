/**
 * The cloud's WebSocket (`/ws?clientId=…&token=…`) on the emulator's HTTP
 * server. Every message of a key's jobs goes to every socket of that key,
 * whatever its `clientId`, as the cloud spec says; a personality with
 * `events: 'client_id'` (the local server) sends a job's JSON events and
 * previews only to the sockets whose `clientId` is the submission's
 * `client_id` (to all when it had none), `status` and text frames to all.
 * Without `requireKey` no `token` is checked and every socket is of the
 * shared lane.
 *
 * Binary previews are encoded per socket: type 4 (with metadata) for sockets
 * that announced `supports_preview_metadata`, type 1 otherwise; type 3
 * progress text goes to all. The fault switches of {@link CloudState}
 * (drops, silence, refused upgrades, sockets closed once open) are applied
 * here, on every upgrade and every send.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { encodeFrame } from '../cloud/frames.ts';
import { SILENT, type Log } from '../transport/log.ts';
import type { CloudEvent, CloudState, SocketControl } from './cloud.ts';
import { redactTarget } from './http.ts';

/** One connected socket. */
interface Client {
  ws: WebSocket;
  key: string;
  clientId: string;
  /** Announced `supports_preview_metadata: true` in its `feature_flags`. */
  previewMetadata: boolean;
  /** Messages sent since the current drop switch was set (see `dropSockets`). */
  sentSinceArm: number;
  armGeneration: number;
}

/** The handle returned by {@link attachCloudSocket}. */
export interface CloudSocketServer {
  /** Number of open sockets (of one key, when given). */
  count(key?: string): number;
  /** Closes every socket (1001) and detaches from the server; resolves once they are gone. */
  close(): Promise<void>;
}

const HOLD_LIMIT = 10_000;
const CLOSE_GRACE_MS = 250;

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** Answers an upgrade request with a plain HTTP error and closes the connection. */
function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: STATUS_TEXT[status]?.toLowerCase().replace(/ /g, '_') ?? 'error', message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
      'Connection: close\r\nContent-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** What a handler of a client message gets: the hub, the socket it came from, and the message's `data`. */
type MessageHandler = (hub: SocketHub, client: Client, data: unknown) => void;

/** `feature_flags`: records whether the client takes previews with metadata and answers with the server's flags. */
function featureFlags(hub: SocketHub, client: Client, data: unknown): void {
  client.previewMetadata = !!data && typeof data === 'object' && (data as Record<string, unknown>).supports_preview_metadata === true;
  const flags: Record<string, unknown> = { supports_preview_metadata: true };
  if (Number.isFinite(hub.state.maxUploadBytes)) flags.max_upload_size = hub.state.maxUploadBytes;
  hub.send(client, JSON.stringify({ type: 'feature_flags', data: flags }));
}

/** The client messages the emulator answers, by `type`; the real server ignores the others, and so does it. */
const MESSAGES: Readonly<Record<string, MessageHandler>> = { feature_flags: featureFlags };

/** The sockets of one emulator: upgrades, client messages, the engine's events, and the fault switches on every send. */
class SocketHub {
  readonly state: CloudState;
  readonly clients = new Set<Client>();
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  readonly #log: Log;
  // Sends postponed by `silenceSockets(ms, { hold: true })`, replayed in order afterwards.
  #held: Array<() => void> = [];
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(state: CloudState, log: Log) {
    this.state = state;
    this.#log = log;
  }

  #refuse(socket: Duplex, status: number, message: string, target: string): void {
    this.#log.debug?.(`WebSocket ${redactTarget(target)} refused: ${status} ${message}`, { url: redactTarget(target), status, message });
    refuseUpgrade(socket, status, message);
  }

  /** The server's `upgrade` listener: refuses what the fault switches, the path or the key say, else connects. */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const { state } = this;
    // A client that resets the connection (a refused upgrade, a killed process) must not crash the emulator.
    socket.on('error', () => socket.destroy());
    const target = req.url ?? '/';
    const url = new URL(target, 'http://emulator');
    if (url.pathname !== '/ws') return this.#refuse(socket, 404, `No WebSocket at ${url.pathname}`, target);
    if (this.#closed) return this.#refuse(socket, 503, 'Emulator is closing', target);
    const reject = state.socketFaults.rejectUpgrades;
    if (reject) {
      if (--reject.count <= 0) state.socketFaults.rejectUpgrades = null;
      return this.#refuse(socket, reject.status, 'Injected fault: upgrade refused', target);
    }
    const token = url.searchParams.get('token') ?? '';
    const key = state.laneOf(token);
    const mode = token ? state.keyMode(token) : undefined;
    // Billing states (402/429 on REST) still may watch their jobs; only a bad key is refused.
    if (state.personality.requireKey && (!token || mode === undefined || mode === 'unauthorized')) {
      return this.#refuse(socket, 401, token ? 'Invalid token' : 'Missing token', target);
    }
    const clientId = url.searchParams.get('clientId') || randomUUID();
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#connect(ws, key, clientId));
  };

  /** A new socket: closed at once by the `closeOnOpen` fault, else greeted with `status` (`sid` = its `clientId`). */
  #connect(ws: WebSocket, key: string, clientId: string): void {
    const { state, clients } = this;
    const log = this.#log;
    const hangUp = state.socketFaults.closeOnOpen;
    if (hangUp) {
      log.debug?.(`WebSocket open: clientId ${clientId}, closed at once (injected fault: code ${hangUp.code})`, { clientId, code: hangUp.code });
      ws.close(hangUp.code, hangUp.reason);
      return;
    }
    const client: Client = { ws, key, clientId, previewMetadata: false, sentSinceArm: 0, armGeneration: state.socketFaults.drop?.generation ?? 0 };
    clients.add(client);
    log.debug?.(`WebSocket open: clientId ${clientId} (${clients.size} open)`, { clientId, open: clients.size });
    ws.on('close', (code: number) => {
      clients.delete(client);
      log.debug?.(`WebSocket closed: clientId ${clientId}, code ${code}`, { clientId, code });
    });
    ws.on('error', () => clients.delete(client));
    ws.on('message', (data: RawData, isBinary: boolean) => this.#message(client, data, isBinary));
    this.send(client, JSON.stringify({ type: 'status', data: { status: { exec_info: { queue_remaining: state.engine.queueRemaining(key) } }, sid: clientId } }));
  }

  /** A client's message goes to the handler of its `type`; binary, unparsable and unknown messages are ignored. */
  #message(client: Client, data: RawData, isBinary: boolean): void {
    if (isBinary) return;
    let msg: unknown;
    try {
      msg = JSON.parse(rawToString(data));
    } catch {
      return; // the real server ignores what it cannot parse
    }
    if (!msg || typeof msg !== 'object') return;
    const { type, data: payload } = msg as { type?: unknown; data?: unknown };
    const handler = typeof type === 'string' && Object.hasOwn(MESSAGES, type) ? MESSAGES[type] : undefined;
    handler?.(this, client, payload);
  }

  /** Sends to one socket through the fault switches. Returns false when the socket was dropped instead. */
  send(client: Client, payload: string | Uint8Array): boolean {
    const { state } = this;
    if (client.ws.readyState !== WebSocket.OPEN) return false;
    if (Date.now() < state.socketFaults.silentUntil) {
      if (state.socketFaults.holdWhileSilent && this.#held.length < HOLD_LIMIT) this.#held.push(() => this.send(client, payload));
      return false;
    }
    const drop = state.socketFaults.drop;
    if (drop && (drop.key === undefined || drop.key === client.key)) {
      if (client.armGeneration !== drop.generation) {
        client.armGeneration = drop.generation;
        client.sentSinceArm = 0;
      }
      const byCount = drop.afterMessages !== undefined && client.sentSinceArm >= drop.afterMessages;
      const byChance = drop.probability !== undefined && state.random() < drop.probability;
      if (byCount || byChance) {
        drop.dropped++;
        if (drop.times !== undefined && drop.dropped >= drop.times) state.socketFaults.drop = null;
        client.ws.terminate();
        this.clients.delete(client);
        return false;
      }
      client.sentSinceArm++;
    }
    client.ws.send(payload);
    return true;
  }

  /**
   * Sends to every socket of `key` (only those of `clientId`, when given),
   * building each socket's payload lazily (type 1 vs 4).
   */
  #deliver(key: string, clientId: string | undefined, payload: (c: Client) => string | Uint8Array | undefined): void {
    for (const c of [...this.clients]) {
      if (c.key !== key || (clientId !== undefined && c.clientId !== clientId)) continue;
      const p = payload(c);
      if (p !== undefined) this.send(c, p);
    }
  }

  /** An engine event as frames: JSON text, a type-3 text frame, or a preview (type 4 with metadata, type 1 without). */
  readonly event = (event: CloudEvent): void => {
    // Type-3 text frames carry no prompt id: they go to every socket whatever the routing.
    const to = this.state.personality.events === 'client_id' && event.kind !== 'text' ? event.clientId : undefined;
    if (event.kind === 'json') {
      const text = JSON.stringify(event.message);
      this.#deliver(event.key, to, () => text);
    } else if (event.kind === 'text') {
      const frame = encodeFrame({ type: 'text', nodeId: event.nodeId, text: event.text });
      this.#deliver(event.key, to, () => frame);
    } else {
      let plain: Uint8Array | undefined;
      let withMeta: Uint8Array | undefined;
      this.#deliver(event.key, to, (c) => {
        if (!c.previewMetadata) return (plain ??= encodeFrame({ type: 'preview_image', imageType: 2, image: event.image }));
        const metadata = {
          node_id: event.nodeId,
          display_node_id: event.displayNodeId,
          real_node_id: event.nodeId,
          prompt_id: event.promptId,
          parent_node_id: null,
          image_type: event.mime,
        };
        return (withMeta ??= encodeFrame({ type: 'preview_image_with_metadata', metadata, image: event.image }));
      });
    }
  };

  #flushHeld = (): void => {
    this.#flushTimer = undefined;
    const wait = this.state.socketFaults.silentUntil - Date.now();
    if (wait > 0) {
      this.#flushTimer = setTimeout(this.#flushHeld, wait);
      return;
    }
    const batch = this.#held;
    this.#held = [];
    for (const replay of batch) replay();
  };

  /** A socket fault switched from the state: drop sockets now, or (re)time the replay of held sends. */
  readonly control = (control: SocketControl): void => {
    if (control.action === 'drop-all') {
      for (const c of [...this.clients]) {
        if (control.key !== undefined && c.key !== control.key) continue;
        c.ws.terminate();
        this.clients.delete(c);
      }
      return;
    }
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    const wait = control.until - Date.now();
    if (wait <= 0) {
      if (this.#held.length) this.#flushHeld();
      return;
    }
    this.#flushTimer = setTimeout(this.#flushHeld, wait);
  };

  /** Closes every socket (1001; cut after a grace period); resolves once they are gone. */
  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#flushTimer);
    this.#held = [];
    const open = [...this.clients];
    this.clients.clear();
    const wss = this.#wss;
    return new Promise<void>((resolve) => {
      if (open.length === 0) {
        wss.close(() => resolve());
        return;
      }
      let left = open.length;
      const done = () => {
        if (--left === 0) {
          clearTimeout(force);
          wss.close(() => resolve());
        }
      };
      // A clean close frame first; a peer that does not answer is cut after a grace period.
      const force = setTimeout(() => {
        for (const c of open) c.ws.terminate();
      }, CLOSE_GRACE_MS);
      for (const c of open) {
        if (c.ws.readyState === WebSocket.CLOSED) done();
        else {
          c.ws.once('close', done);
          c.ws.close(1001, 'emulator closing');
        }
      }
    });
  }
}

/**
 * Serves `/ws` on `server` for `state`: authenticates the `token` query
 * against the API keys (unknown, missing or `unauthorized` → the upgrade is
 * refused with 401; not checked when the personality requires no key),
 * greets with `status` (`sid` = the `clientId`), answers the client's
 * messages ({@link MESSAGES}: `feature_flags` with the server's), and relays
 * job events.
 */
export function attachCloudSocket(server: Server, state: CloudState, log: Log = SILENT): CloudSocketServer {
  const hub = new SocketHub(state, log);
  server.on('upgrade', hub.upgrade);
  const offEvents = state.subscribe(hub.event);
  const offControl = state.onSocketControl(hub.control);
  let closing: Promise<void> | undefined;
  return {
    count: (key) => [...hub.clients].filter((c) => key === undefined || c.key === key).length,
    close: () => {
      if (closing) return Promise.resolve();
      server.off('upgrade', hub.upgrade);
      offEvents();
      offControl();
      return (closing = hub.close());
    },
  };
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
