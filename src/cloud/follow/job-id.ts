/**
 * Job ids chosen by the client before the submission, so that a job whose
 * answer is lost can still be named, looked up, followed and stopped.
 *
 * @module
 */

/**
 * A new job id: a random (v4) UUID.
 *
 * @example
 * ```ts
 * const promptId = newJobId(); // 'f47ac10b-58cc-4372-a567-0e02b2c3d479'
 * ```
 */
export function newJobId(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  // Browsers offer randomUUID in secure contexts only (https, localhost); random bytes everywhere.
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
