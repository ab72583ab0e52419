/**
 * Typed JSON messages of the cloud WebSocket.
 *
 * {@link parseMessage} never throws: the socket must survive whatever the
 * server sends (DESIGN §5). Each text frame becomes exactly one of:
 *
 * - a known message, `{ type: 'progress', data: ProgressData }` and so on;
 * - `{ type: 'unknown', rawType, data }` for a `type` this SDK does not know
 *   (the API is experimental: new types pass through, typed as unknown);
 * - `{ type: 'invalid', rawType, data, issues }` for a known type whose data has
 *   a wrong type (a string where a number belongs);
 * - `{ type: 'malformed', raw, error }` for text that is not JSON, or not an
 *   object with a string `type`.
 *
 * Speed: validation walks the generated rules (`rules.generated.ts`) without
 * allocating, and a valid known message is the parsed JSON object itself (no
 * copy, no wrapper), so the whole pipeline costs little more than `JSON.parse`.
 *
 * @module
 */
import type { SchemaIssue } from '../errors.ts';
import type { EventDataMap, EventType } from '../schemas/events.ts';
import { EVENT_SCHEMAS } from '../schemas/rules.generated.ts';
import { validate } from '../schemas/validate.ts';

/** A known message whose data matched its schema. */
export type KnownMessage = { [K in EventType]: { type: K; data: EventDataMap[K] } }[EventType];

/** A message whose `type` this SDK does not know; passed through untouched. */
export interface UnknownMessage {
  type: 'unknown';
  /** The `type` the server sent. */
  rawType: string;
  /** The `data` the server sent (unvalidated). */
  data: unknown;
}

/** A known message type whose data failed validation (a wrong type). */
export interface InvalidMessage {
  type: 'invalid';
  /** The known `type` the server sent. */
  rawType: EventType;
  /** The `data` the server sent (unvalidated). */
  data: unknown;
  /** What was wrong, as zod reports it. */
  issues: SchemaIssue[];
}

/** A text frame that is not JSON, or not an object with a string `type`. */
export interface MalformedMessage {
  type: 'malformed';
  /** The text as received. */
  raw: string;
  /** Why it was rejected. */
  error: string;
}

/**
 * Everything a text frame can become. Discriminated on `type`.
 *
 * @example
 * ```ts
 * const m = parseMessage(text);
 * switch (m.type) {
 *   case 'progress': console.log(m.data.value, '/', m.data.max); break;
 *   case 'executed': console.log(m.data.output?.images); break; // null: a cached node without UI output
 *   case 'unknown': console.debug('new message type', m.rawType); break;
 *   case 'invalid': console.warn(m.rawType, m.issues); break;
 * }
 * ```
 */
export type CloudMessage = KnownMessage | UnknownMessage | InvalidMessage | MalformedMessage;

/** The message of one known type. */
export type MessageOf<K extends EventType> = Extract<KnownMessage, { type: K }>;

/**
 * Parses one WebSocket text frame. Never throws.
 *
 * A valid known message is returned as the parsed object itself (any other
 * top-level members it had stay on it).
 *
 * @example
 * ```ts
 * parseMessage('{"type":"progress","data":{"value":3,"max":20,"prompt_id":"p1"}}');
 * // { type: 'progress', data: { value: 3, max: 20, prompt_id: 'p1' } }
 * parseMessage('{"type":"brand_new","data":{}}');
 * // { type: 'unknown', rawType: 'brand_new', data: {} }
 * parseMessage('{"type":"progress","data":{"value":"3","max":20,"prompt_id":"p1"}}');
 * // { type: 'invalid', rawType: 'progress', data: {…}, issues: [{ path: ['value'], … }] }
 * ```
 */
export function parseMessage(text: string): CloudMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // Not the parser's message: it quotes the text, which may carry a user's prompt into a log line.
    return { type: 'malformed', raw: text, error: 'Message is not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { type: 'malformed', raw: text, error: 'Message is not a JSON object' };
  }
  const envelope = parsed as { type?: unknown; data?: unknown };
  const type = envelope.type;
  if (typeof type !== 'string') return { type: 'malformed', raw: text, error: 'Message has no string `type`' };
  if (!Object.hasOwn(EVENT_SCHEMAS, type)) return { type: 'unknown', rawType: type, data: envelope.data };
  const known = type as EventType;
  const result = validate<unknown>(EVENT_SCHEMAS[known], envelope.data);
  if (result.ok) return envelope as KnownMessage;
  return { type: 'invalid', rawType: known, data: envelope.data, issues: result.issues };
}

/**
 * The job a message belongs to: `data.prompt_id` when it is a string (for
 * known, unknown and invalid messages alike), else `undefined`.
 *
 * @example
 * ```ts
 * const id = promptIdOf(parseMessage(text));
 * if (id) jobs.get(id)?.(message);
 * ```
 */
export function promptIdOf(message: CloudMessage): string | undefined {
  if (message.type === 'malformed') return undefined;
  const data = message.data;
  if (typeof data !== 'object' || data === null) return undefined;
  const id = (data as { prompt_id?: unknown }).prompt_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Whether `message` is a known message of type `type` (narrowing helper).
 *
 * @example
 * ```ts
 * if (isMessage(m, 'executed') && m.data.output) save(m.data.output);
 * ```
 */
export function isMessage<K extends EventType>(message: CloudMessage, type: K): message is MessageOf<K> {
  return message.type === type;
}
