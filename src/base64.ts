/**
 * Bytes → base64 without Node's `Buffer` (the browser build has none).
 *
 * @module
 */

type WithToBase64 = Uint8Array & { toBase64?: () => string };

/** Base64 of the bytes of a Blob, Uint8Array (any view) or ArrayBuffer. */
export async function toBase64(input: Blob | Uint8Array | ArrayBuffer): Promise<string> {
  const bytes: WithToBase64 =
    input instanceof Uint8Array ? input : input instanceof ArrayBuffer ? new Uint8Array(input) : new Uint8Array(await input.arrayBuffer());
  // Native where the runtime has it (newer engines), else btoa over chunks:
  // String.fromCharCode with a spread of the whole array overflows the stack past ~100 KB.
  if (typeof bytes.toBase64 === 'function') return bytes.toBase64();
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]);
  return btoa(binary);
}
