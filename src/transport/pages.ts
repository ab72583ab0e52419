/**
 * Paginated results, whatever the cursor (a page number on the registry, an
 * offset on the cloud's job list): the awaitable-and-iterable result, and the
 * one loop that walks pages.
 *
 * @module
 */
import { APIUserAbortError } from '../errors.ts';
import { APIPromise, type WithResponse } from './promise.ts';

/** The item type of an async-iterable page. */
export type ItemOf<P> = P extends AsyncIterable<infer T> ? T : never;

/**
 * The result of a paginated method: awaitable as the first page (with
 * `withResponse()`), async-iterable over every item of every page, later
 * pages fetched only as the loop asks for them.
 *
 * @example
 * ```ts
 * const page = await registry.searchNodes({ search: 'upscale' }); // one page
 * for await (const node of registry.searchNodes({ supported_os: 'MacOS' })) console.log(node.id); // all
 * for await (const job of cloud.listJobs({ status: 'failed' })) console.log(job.id);
 * ```
 */
export class PagePromise<P extends AsyncIterable<unknown>> extends APIPromise<P> implements AsyncIterable<ItemOf<P>> {
  /** `load` checks the arguments and fetches the first page; a throw there rejects the promise. */
  constructor(load: () => Promise<WithResponse<P>>) {
    super((async () => load())());
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ItemOf<P>> {
    yield* (await this) as AsyncIterable<ItemOf<P>>;
  }
}

/** What {@link walkPages} needs of a page. */
export interface WalkablePage<P> {
  hasNextPage(): boolean;
  getNextPage(): Promise<P>;
}

/**
 * Every item from `first` on, later pages fetched as the loop asks, each
 * item (by `id`) yielded once: offset and page-number cursors shift when
 * items are added while the loop runs, so a page may repeat the end of the
 * one before it. Stops on the last page, and when a server answers with a
 * page that does not advance (`position` not greater), or with two pages in
 * a row that bring nothing new (a server that ignores the cursor would
 * otherwise loop forever; one such page is a shift by a whole page).
 * Throws {@link APIUserAbortError} once `signal` aborts.
 */
export async function* walkPages<T, P extends WalkablePage<P>>(
  first: P,
  items: (page: P) => readonly T[],
  position: (page: P) => number,
  signal?: AbortSignal,
): AsyncGenerator<T, void, undefined> {
  let current = first;
  const yielded = new Set<unknown>();
  for (let stale = 0; ; ) {
    let fresh = false;
    for (const item of items(current)) {
      const id = (item as { id?: unknown } | null)?.id;
      // An item without an id cannot be told from a repeat: yielded, and taken as progress.
      if (id !== undefined) {
        if (yielded.has(id)) continue;
        yielded.add(id);
      }
      fresh = true;
      yield item;
    }
    stale = fresh ? 0 : stale + 1;
    if (!current.hasNextPage() || stale === 2) return;
    if (signal?.aborted) throw new APIUserAbortError(undefined, { cause: signal.reason });
    const next = await current.getNextPage();
    if (position(next) <= position(current)) return;
    current = next;
  }
}
