/**
 * Comfy API v2's error envelope, `{"error":{"code","message","details"}}`,
 * for every answer of the v2 routes: {@link V2Error} is thrown by handlers,
 * {@link v2Handler} turns it (and the router's own `HttpError`s, e.g. a body
 * too large) into the envelope.
 *
 * @module
 */
import { HttpError, sendJson, type Handler, type RequestContext } from '../http.ts';

/** A v2 error answer: status, `error.code`, `error.message`, `error.details` and extra headers (e.g. `Retry-After`). */
export class V2Error extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: string, message: string, details: unknown = null, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = 'V2Error';
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

/** The v2 code of a router `HttpError` (bad JSON, wrong content type, body too large). */
function codeOf(err: HttpError): string {
  if (err.status === 413) return 'payload_too_large';
  if (err.status === 400 || err.status === 415) return 'invalid_request';
  return err.code;
}

/** Writes the envelope. */
export function sendV2Error(ctx: RequestContext, err: V2Error): void {
  sendJson(ctx.res, err.status, { error: { code: err.code, message: err.message, details: err.details } }, { ...err.headers });
}

/** Wraps a handler so that what it throws is answered in the v2 envelope. */
export function v2Handler(handler: Handler): Handler {
  return async (ctx) => {
    try {
      await handler(ctx);
    } catch (err) {
      if (ctx.res.headersSent) throw err;
      if (err instanceof V2Error) return sendV2Error(ctx, err);
      if (err instanceof HttpError) return sendV2Error(ctx, new V2Error(err.status, codeOf(err), err.message, null, err.headers));
      throw err;
    }
  };
}

/** 404 `not_found` (the code the real server sends; Cloud's `job_not_found`/`asset_not_found` are not imitated). */
export function notFound(what: string): V2Error {
  return new V2Error(404, 'not_found', `${what} not found.`);
}
