/**
 * Bearer-token check shared by the emulator's services that take
 * `Authorization: Bearer <token>` without a per-publisher scope (the proxy).
 *
 * @module
 */
import { HttpError, type RequestContext } from './http.ts';

/** `WWW-Authenticate` challenge sent with every 401, as the registry does. */
export const BEARER_CHALLENGE: Readonly<Record<string, string>> = Object.freeze({
  'WWW-Authenticate': 'Bearer realm="platformui-emulator"',
});

/** The token of an `Authorization: Bearer <token>` header, or `undefined`. */
export function bearerToken(ctx: Pick<RequestContext, 'headers'>): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.headers.authorization ?? '');
  return match?.[1];
}

/** Returns the bearer token, or throws 401 when it is missing or `known` refuses it. */
export function requireBearer(ctx: Pick<RequestContext, 'headers'>, known: (token: string) => boolean): string {
  const token = bearerToken(ctx);
  if (token === undefined) throw new HttpError(401, 'Missing bearer token', 'unauthorized', BEARER_CHALLENGE);
  if (!known(token)) throw new HttpError(401, 'Invalid bearer token', 'unauthorized', BEARER_CHALLENGE);
  return token;
}
