// toError(): every failure of a request becomes its SDK error in one place (src/transport/to-error.ts). A table:
// each status and body shape → class and fields; then no answer in time, a failed connection, the caller's abort.
import { describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InsufficientCreditsError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  SubscriptionInactiveError,
} from '../../src/errors.ts';
import { errorClassFor, toError, type ServiceKind } from '../../src/transport/to-error.ts';
import { blamesRequest } from '../../src/transport/blame.ts';

const URL_SHOWN = 'https://api.test/api/prompt';
const at = (service: ServiceKind) => ({ method: 'POST', url: URL_SHOWN, service });

describe('toError: an answer → its class, by status and service', () => {
  it.each([
    [400, 'registry', BadRequestError],
    [401, 'cloud', AuthenticationError],
    [402, 'cloud', InsufficientCreditsError],
    [403, 'proxy', PermissionDeniedError],
    [404, 'registry', NotFoundError],
    [409, 'registry', ConflictError],
    [422, 'v2', APIError],
    [429, 'registry', RateLimitError],
    [429, 'proxy', RateLimitError],
    [429, 'v2', RateLimitError],
    [429, 'cloud', SubscriptionInactiveError],
    [500, 'cloud', InternalServerError],
    [503, 'registry', InternalServerError],
    [302, 'cloud', APIError],
    [418, 'proxy', APIError],
  ] as const)('%i on %s → %o', (status, service, Class) => {
    const err = toError({ ...at(service), kind: 'status', status, body: undefined });
    expect(err).toBeInstanceOf(Class);
    expect(err.constructor).toBe(Class);
    expect(errorClassFor(status, service)).toBe(Class);
    expect(err).toMatchObject({ status, method: 'POST', url: URL_SHOWN, body: '', error: undefined });
    expect(err.message).toBe(`${status} POST ${URL_SHOWN}`);
  });
});

describe('toError: an answer → its fields, by body shape', () => {
  it.each([
    {
      shape: 'ErrorResponse (registry)',
      body: { error: 'node_exists', message: 'Node comfy-foo already exists' },
      fields: { error: 'node_exists' },
      message: `409 POST ${URL_SHOWN} — node_exists: Node comfy-foo already exists`,
    },
    {
      shape: "v2's envelope",
      body: { error: { code: 'queue_full', message: 'The queue is full' } },
      fields: { error: { code: 'queue_full', message: 'The queue is full' }, code: 'queue_full' },
      message: `409 POST ${URL_SHOWN} — The queue is full`,
    },
    { shape: 'plain text', body: '502 Bad Gateway from the proxy', fields: { error: undefined }, message: `409 POST ${URL_SHOWN} — 502 Bad Gateway from the proxy` },
    { shape: 'JSON without error or message', body: { detail: 'x' }, fields: { error: undefined }, message: `409 POST ${URL_SHOWN}` },
    { shape: 'empty', body: undefined, fields: { body: '' }, message: `409 POST ${URL_SHOWN}` },
  ])('$shape', ({ body, fields, message }) => {
    const err = toError({ ...at('registry'), kind: 'status', status: 409, body }) as APIError;
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ body: body ?? '', ...fields });
    // `code` is set only where the body has one (v2's envelope): other errors' fields stay as they were.
    expect('code' in err).toBe('code' in fields);
    expect(err.message).toBe(message);
  });

  it('scrubs the secrets from the body, keeps Retry-After and ends the message with the hint', () => {
    const err = toError({
      ...at('cloud'),
      secrets: ['sk-secret-key'],
      kind: 'status',
      status: 401,
      body: { error: 'unauthorized', message: 'bad key sk-secret-key' },
      headers: new Headers({ 'retry-after': '3' }),
      hint: 'pass apiKey',
    }) as APIError;
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(JSON.stringify(err)).not.toContain('sk-secret-key');
    expect(err.retryAfter).toBe('3');
    expect(err.hint).toBe('pass apiKey');
    expect(err.message.endsWith('; pass apiKey')).toBe(true);
  });
});

describe('toError: no answer', () => {
  it('a timeout → APITimeoutError (the request may have arrived)', () => {
    const err = toError({ ...at('registry'), kind: 'timeout', timeout: 1500 }) as APITimeoutError;
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(err).toMatchObject({ timeout: 1500, sent: 'maybe', method: 'POST', url: URL_SHOWN });
    expect(toError({ ...at('registry'), kind: 'timeout', timeout: false })).toMatchObject({ timeout: undefined });
  });

  const failed = (code?: string, inner?: string) => {
    const cause = Object.assign(new Error(inner ?? 'connect failed'), code ? { code } : {});
    return new TypeError('fetch failed', { cause });
  };
  it.each([
    ['refused', failed('ECONNREFUSED'), 'ECONNREFUSED', 'no', 'Connection failed (ECONNREFUSED)'],
    ['reset', failed('ECONNRESET'), 'ECONNRESET', 'maybe', 'Connection failed (ECONNRESET)'],
    ['a blocked port', failed(undefined, 'bad port'), undefined, 'no', 'Connection failed (bad port)'],
    ['not an Error', 'boom', undefined, 'maybe', 'Connection failed'],
  ])('a connection %s → APIConnectionError', (_, cause, code, sent, detail) => {
    const err = toError({ ...at('proxy'), kind: 'network', cause }) as APIConnectionError;
    expect(err.constructor).toBe(APIConnectionError);
    expect(err).toMatchObject({ code, sent, method: 'POST', url: URL_SHOWN });
    expect(err.message).toBe(`${detail}: POST ${URL_SHOWN}`);
    // Never the cause itself: it may hold the Request and its headers.
    expect(err.cause).toBeUndefined();
  });

  it("a connection failure's text is scrubbed of the secrets", () => {
    const err = toError({ ...at('proxy'), secrets: ['tok-12345'], kind: 'network', cause: new Error('failed for tok-12345') });
    expect(err.message).not.toContain('tok-12345');
  });

  it("the caller's abort → APIUserAbortError with the signal's reason", () => {
    const reason = new Error('user left');
    const err = toError({ ...at('cloud'), kind: 'abort', reason });
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(err.cause).toBe(reason);
  });
});

describe('blamesRequest: which answers say the request itself was wrong (a refused submission)', () => {
  it.each([
    [400, true],
    [404, true],
    [409, true],
    [422, true],
    [401, false],
    [402, false],
    [403, false],
    [429, false],
    [500, false],
    [503, false],
  ])('%i → %s', (status, blames) => {
    expect(blamesRequest(status)).toBe(blames);
  });
});
