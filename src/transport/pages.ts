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
 * Every item from `first` on, later pages fetched as the loop asks. Stops on
 * the last page, and when a server answers with a page that does not advance
 * (`position` not greater) or repeats one it sent: a server that ignores the
 * cursor would otherwise loop forever. Throws {@link APIUserAbortError} once
 * `signal` aborts.
 */
export async function* walkPages<T, P extends WalkablePage<P>>(
  first: P,
  items: (page: P) => readonly T[],
  position: (page: P) => number,
  signal?: AbortSignal,
): AsyncGenerator<T, void, undefined> {
  let current = first;
  const seen = new Set<string>();
  for (;;) {
    yield* items(current);
    if (!current.hasNextPage()) return;
    if (signal?.aborted) throw new APIUserAbortError(undefined, { cause: signal.reason });
    seen.add(fingerprint(items(current)));
    const next = await current.getNextPage();
    if (position(next) <= position(current) || seen.has(fingerprint(items(next)))) return;
    current = next;
  }
}

// Identifies a page's content, so a server repeating page 1 for every cursor is caught.
function fingerprint(items: readonly unknown[]): string {
  const first = items[0] as { id?: unknown } | undefined;
  const last = items[items.length - 1] as { id?: unknown } | undefined;
  return `${items.length}:${String(first?.id)}:${String(last?.id)}`;
}
