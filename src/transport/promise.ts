/**
 * The promise every SDK method returns: awaitable as the parsed data, with
 * `withResponse()` for the raw `Response` (headers, status) alongside it.
 *
 * @module
 */

/** Parsed data together with the HTTP response it came from. */
export interface WithResponse<T> {
  data: T;
  response: Response;
}

/**
 * A `Promise<T>` that also exposes the raw response.
 *
 * @example
 * ```ts
 * const { data, response } = await registry.listPublishers().withResponse();
 * console.log(response.headers.get('content-type'), data.length);
 * ```
 */
export class APIPromise<T> extends Promise<T> {
  // A bundler renames a class that names itself in its body (`_APIPromise`): this keeps `APIPromise.name`.
  static override readonly name: string = 'APIPromise';
  readonly #raw: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  constructor(raw: Promise<WithResponse<T>>) {
    // The executor's value is never observed: then/catch/finally delegate to `raw`.
    super((resolve) => resolve(undefined as T));
    this.#raw = raw;
  }

  /**
   * Runs `fn` and wraps its result; a synchronous throw (an argument check)
   * becomes a rejection, so `.catch()` sees every failure.
   */
  static from<T>(fn: () => Promise<WithResponse<T>>): APIPromise<T> {
    return new APIPromise((async () => fn())());
  }

  // Derived promises (from then/catch) must be plain Promises, not APIPromises.
  static override get [Symbol.species]() {
    return Promise;
  }

  /** The parsed data and the `Response` it was read from. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#raw;
  }

  #parsed(): Promise<T> {
    return (this.#data ??= this.#raw.then((r) => r.data));
  }

  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#parsed().then(onfulfilled, onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#parsed().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#parsed().finally(onfinally);
  }
}

