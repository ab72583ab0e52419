/**
 * `@platformui/sdk/schemas`: the runtime zod/mini schemas of every resource,
 * request and event, and the lists of known enum values (`RELIGHT_STYLES`,
 * `JOB_STATUSES`, `EVENT_TYPES`…), for users who validate data themselves.
 * The root entry exports the same names as types only, so importing `Node`
 * from `@platformui/sdk` never shadows the DOM's `Node` value.
 *
 * @example
 * ```ts
 * import { Node, RELIGHT_STYLES } from '@platformui/sdk/schemas';
 * import * as z from 'zod/mini';
 * const ok = z.safeParse(Node, JSON.parse(text)).success;
 * ```
 *
 * @module
 */
export * from './registry.ts';
export * from './proxy.ts';
export * from './cloud.ts';
export * from './events.ts';
export type { Model, OpenEnum } from './common.ts';
