/**
 * Browser implementation of {@link Platform}: no Node built-ins. Paths and
 * Node streams do not exist here; a web stream is read into a Blob because
 * browsers only stream request bodies over HTTP/2.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import type { Platform } from './types.ts';

const nodeOnly = (what: string, field: string) => new InvalidArgumentError(`${what} is only available in Node`, field);

export const platform: Platform = {
  node: false,
  fileBlob: () => Promise.reject(nodeOnly('uploading from a file path', 'file')),
  // Rejected on the first next(), as Node's reports a missing file: callers handle both in the same place.
  readChunks: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(nodeOnly('reading from a file path', 'file')) }) }),
  isNodeReadable: () => false,
  async streamMultipart(fields, fileField, stream, filename) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append(fileField, await new Response(stream as ReadableStream).blob(), filename);
    return { body: form, headers: {} };
  },
  async webSocket() {
    return globalThis.WebSocket;
  },
  uploadFetch: undefined,
  saveToFile: () => Promise.reject(nodeOnly('saving to a file', 'destination')),
};
