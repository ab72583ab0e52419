// mayResend: the one rule that decides whether the transport may send a
// request again. Read as a table: method × paid × allowPost × stream body.
import { describe, expect, it } from 'vitest';
import { mayResend, type ResendQuestion } from '../../src/transport/resend.ts';
import { APIConnectionError, APIError, APITimeoutError, BadRequestError, InsufficientCreditsError, InternalServerError } from '../../src/errors.ts';
import { answerLost } from '../../src/cloud/submission.ts';

const METHODS = ['GET', 'DELETE', 'POST', 'PUT'] as const;

// The expected answer, written out row by row rather than recomputed from the rule.
const TABLE: Array<[ResendQuestion['method'], paid: boolean, allowPost: boolean, streamBody: boolean, expected: boolean]> = [
  // Idempotent methods: re-sent unless paid or streamed.
  ['GET', false, false, false, true],
  ['GET', false, true, false, true],
  ['GET', true, false, false, false],
  ['GET', true, true, false, false],
  ['DELETE', false, false, false, true],
  ['DELETE', false, true, false, true],
  ['DELETE', true, true, false, false],
  ['GET', false, true, true, false],
  ['PUT', false, false, false, true],
  ['PUT', false, true, false, true],
  ['PUT', true, true, false, false],
  ['PUT', false, true, true, false],
  // POST: only when the caller allows it, never when paid or streamed.
  ['POST', false, false, false, false],
  ['POST', false, true, false, true],
  ['POST', true, false, false, false],
  ['POST', true, true, false, false], // a submission, a proxy task start, a publication
  ['POST', false, true, true, false], // an upload from a stream: the body is gone
  ['POST', true, true, true, false],
];

describe('mayResend', () => {
  it.each(TABLE)('%s paid=%s allowPost=%s stream=%s → %s', (method, paid, allowPost, streamBody, expected) => {
    expect(mayResend({ method, paid, allowPost, streamBody })).toBe(expected);
  });

  it('never re-sends a paid request, in any combination', () => {
    for (const method of METHODS) for (const allowPost of [false, true]) for (const streamBody of [false, true]) expect(mayResend({ method, paid: true, allowPost, streamBody })).toBe(false);
  });
});

describe('answerLost: may a failed submission have made its job?', () => {
  it.each([
    ['refused (ECONNREFUSED)', new APIConnectionError('POST', 'u', 'Connection failed', 'ECONNREFUSED'), 'no'],
    ['no such host (ENOTFOUND)', new APIConnectionError('POST', 'u', 'Connection failed', 'ENOTFOUND'), 'no'],
    ['reset after sending (ECONNRESET)', new APIConnectionError('POST', 'u', 'Connection failed', 'ECONNRESET'), 'maybe'],
    ['no code (a browser)', new APIConnectionError('POST', 'u'), 'maybe'],
    ['timed out', new APITimeoutError('POST', 'u', 100), 'maybe'],
    ['502 from a gateway', new InternalServerError({ status: 502, body: '', method: 'POST', url: 'u' }), 'maybe'],
    ['408', new APIError({ status: 408, body: '', method: 'POST', url: 'u' }), 'maybe'],
    ['400: the workflow was refused', new BadRequestError({ status: 400, body: {}, method: 'POST', url: 'u' }), undefined],
    ['402: no credits', new InsufficientCreditsError({ status: 402, body: {}, method: 'POST', url: 'u' }), undefined],
    ['a bug of the caller', new TypeError('x'), undefined],
  ] as const)('%s → %s', (_why, err, expected) => {
    expect(answerLost(err)).toBe(expected);
  });
});
