/**
 * What differs between Node and browsers, behind one interface. The default
 * build uses `node.ts`; the browser build swaps in `browser.ts` (tsup alias),
 * so no Node built-in, `ws` or `form-data` reaches a browser bundle.
 *
 * @module
 */

/** A WebSocket constructor compatible with the WHATWG one. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocket;

/** A multipart request body together with its content type. */
export interface MultipartBody {
  body: FormData | ReadableStream<Uint8Array>;
  headers: Record<string, string>;
}

/** Node- or browser-specific operations. */
export interface Platform {
  /** Whether this is the Node build. */
  readonly node: boolean;
  /** A Blob backed by a file on disk, read as it is sent (Node only). */
  fileBlob(path: string): Promise<Blob>;
  /**
   * A file's bytes, read in order into ONE buffer of `chunkSize` bytes (Node
   * only; default 1 MiB) that every chunk reuses: each chunk is a view that is
   * valid only until the next iteration (copy it to keep it). Reading a 1 GiB
   * file this way holds one buffer, where a Blob stream allocates a fresh chunk
   * per read and RSS grows by ~40 MiB of garbage before it is collected.
   * Errors surface on the first iteration: a path that is not a readable file
   * is an `InvalidArgumentError` (in a browser, always); an aborted `signal`,
   * an `APIUserAbortError` before the next read. Ending the iteration early
   * (`break`, `return()`) closes the file.
   */
  readChunks(path: string, chunkSize?: number, signal?: AbortSignal): AsyncIterable<Uint8Array>;
  /** Whether a value is a Node `Readable`. */
  isNodeReadable(value: unknown): boolean;
  /** A streamed multipart body for a Node or web stream of unknown length. */
  streamMultipart(fields: Record<string, string>, fileField: string, stream: unknown, filename: string): Promise<MultipartBody>;
  /** The WebSocket to use: the runtime's global one, else `ws` (Node). */
  webSocket(): Promise<WebSocketConstructor>;
  /**
   * A `fetch` for requests with large streamed bodies, or `undefined` to use
   * the ordinary one. Node's fetch reads a request body as fast as the disk
   * gives it, whatever the socket takes (a 256 MiB upload held ~285 MiB), so
   * Node sends uploads through node:http, which waits for the socket to drain.
   */
  readonly uploadFetch: typeof globalThis.fetch | undefined;
  /** Writes a response body to a file as it arrives; returns the number of bytes (Node only). */
  saveToFile(body: ReadableStream<Uint8Array>, path: string): Promise<number>;
}
