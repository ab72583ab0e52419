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
