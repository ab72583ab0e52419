/**
 * How the emulator answers: JSON, ErrorResponse `{ error, message }`, text,
 * or nothing, and {@link HttpError}, which a handler throws to answer with an
 * ErrorResponse.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';

const STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  429: 'too_many_requests',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

/** The `error` code the emulator uses for a status when no more specific one applies. */
export function errorCodeFor(status: number): string {
  return STATUS_CODES[status] ?? (status >= 500 ? 'server_error' : 'error');
}

/**
 * Thrown by handlers (and the body readers) to answer with an ErrorResponse
 * `{ error, message }`. Anything else thrown becomes a 500.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Readonly<Record<string, string>>;

  /**
   * @param status HTTP status to answer with.
   * @param message The ErrorResponse `message` member.
   * @param code The ErrorResponse `error` member; defaults to a name derived from the status.
   * @param headers Extra response headers (e.g. `WWW-Authenticate`, `Allow`).
   */
  constructor(status: number, message: string, code: string = errorCodeFor(status), headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** Writes a JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(payload.length),
  });
  res.end(payload);
}

/** Writes an ErrorResponse `{ error, message }`. */
export function sendError(
  res: ServerResponse,
  status: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error, message }, headers);
}

/** Writes a text response (`text/plain` unless `contentType` says otherwise), e.g. the local server's `404: Not Found`. */
export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}, contentType = 'text/plain; charset=utf-8'): void {
  const payload = Buffer.from(text, 'utf8');
  res.writeHead(status, { ...headers, 'Content-Type': contentType, 'Content-Length': String(payload.length) });
  res.end(payload);
}

/** Writes a bodiless response (204 and friends). */
export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, headers);
  res.end();
}

