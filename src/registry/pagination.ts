/**
 * Pages of nodes: `await` gives one page, `for await` gives every node across
 * pages, fetched only as the loop asks for them.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import { walkPages } from '../transport/pages.ts';
import type { WithResponse } from '../transport/promise.ts';

/** Fetches the page with the given number. */
export type PageFetcher<T> = (page: number) => Promise<WithResponse<PageBody<T>>>;

/** The wire envelope of a page, with `nodes` of item type `T` (unknown fields are kept at runtime). */
export interface PageBody<T> {
  /** Maximum items per page. */
  limit: number;
  nodes: T[];
  /** Number of this page (1-based). */
  page: number;
  /** Total items across all pages. */
  total: number;
  totalPages: number;
}

/**
 * One page of a paginated list. Carries the wire fields (`limit`, `nodes`,
 * `page`, `total`, `totalPages`, and any unknown ones in `body`).
 */
export class Page<T> implements AsyncIterable<T> {
  /** The items of this page. */
  readonly nodes: T[];
  /** Maximum items per page. */
  readonly limit: number;
  /** Number of this page (1-based). */
  readonly page: number;
  /** Total items across all pages. */
  readonly total: number;
  /** Number of pages. */
  readonly totalPages: number;
  /** The whole response body, unknown fields included. */
  readonly body: PageBody<T>;
  /** The HTTP response this page was read from. */
  readonly response: Response;
  readonly #fetch: PageFetcher<T>;
  readonly #signal: AbortSignal | undefined;

  constructor(result: WithResponse<PageBody<T>>, fetchPage: PageFetcher<T>, signal?: AbortSignal) {
    const b = result.data;
    this.body = b;
    this.response = result.response;
    this.nodes = b.nodes;
    this.limit = b.limit;
    this.page = b.page;
    this.total = b.total;
    this.totalPages = b.totalPages;
    this.#fetch = fetchPage;
    this.#signal = signal;
  }

  /** Whether a following page exists, by `totalPages` (an empty page ends the list too). */
  hasNextPage(): boolean {
    return this.nodes.length > 0 && this.page < this.totalPages;
  }

  /** Fetches the following page. Throws {@link InvalidArgumentError} when there is none: check {@link hasNextPage} first. */
  async getNextPage(): Promise<Page<T>> {
    if (!this.hasNextPage()) throw new InvalidArgumentError(`there is no page after page ${this.page} of ${this.totalPages}`);
    return new Page(await this.#fetch(this.page + 1), this.#fetch, this.#signal);
  }

  /**
   * Every item from this page on. Stops at `totalPages`, on an empty page, or
   * when the server answers with a page it already sent (a server that ignores
   * `page` would otherwise loop forever).
   */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* walkPages<T, Page<T>>(this, (p) => p.nodes, (p) => p.page, this.#signal);
  }
}
