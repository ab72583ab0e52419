/**
 * The log line of one text message the socket received.
 *
 * @module
 */
import type { Log } from '../../transport/log.ts';
import type { CloudMessage } from '../messages.ts';

/**
 * The line of one text message: its type at debug; a malformed or off-schema
 * one at warn (the first of each type, remembered in `warned`; later ones at
 * debug, so a server that sends it on every step does not flood the console).
 * The reason, never the text: a message may carry a user's prompt.
 *
 * @example
 * ```ts
 * logMessage(log, warnedTypes, parseMessage(text), promptIdOf(message), text.length);
 * ```
 */
export function logMessage(log: Log, warned: Set<string>, message: CloudMessage, id: string | undefined, bytes: number): void {
  const about = id ? { promptId: id } : {};
  if (message.type !== 'malformed' && message.type !== 'invalid') {
    const type = message.type === 'unknown' ? message.rawType.slice(0, 40) : message.type;
    log.debug?.(`socket: ${message.type === 'unknown' ? `unknown message type ${JSON.stringify(type)}` : type}${id ? ` for ${id}` : ''}`, { type, known: message.type !== 'unknown', ...about, bytes });
    return;
  }
  const kind = message.type === 'malformed' ? 'malformed' : message.rawType;
  const line = warned.has(kind) ? log.debug : log.warn;
  if (!line) return;
  warned.add(kind);
  const reason = message.type === 'malformed' ? message.error : message.issues.map((i) => `${i.path.join('.') || '(data)'}: ${i.message.replace(/, got [\s\S]*$/, '')}`).join('; ');
  const what = message.type === 'malformed' ? 'a malformed message' : `a ${message.rawType} message that does not match its schema`;
  line(`socket: ${what} (${bytes} bytes): ${reason}; passed on as '${message.type}'`, { type: message.type, ...(message.type === 'invalid' ? { rawType: message.rawType } : {}), ...about, bytes, reason });
}
