/**
 * Which registry packs a workflow needs that the server does not have.
 *
 * Pure logic, no HTTP of its own: the `RegistryClient` hands in a
 * {@link PackLookup} backed by its own requests, and a cache it keeps for its
 * lifetime, so this module can be tested with a fake and never decides how a
 * request is sent, retried or authenticated.
 *
 * @module
 */
import type { OptionKeys } from '../args.ts';
import { APIUserAbortError, InvalidArgumentError } from '../errors.ts';
import type { Node } from '../schemas/registry.ts';
import { describeValue } from '../schemas/describe.ts';

/**
 * The two registry reads {@link findMissingPacks} needs. The `RegistryClient`
 * implements it with `getNodeForClass` and `getNodes`; tests pass a fake.
 *
 * @example
 * ```ts
 * const lookup: PackLookup = {
 *   nodeForClass: (className, o) => registry.getNodeForClass(className, o),
 *   nodes: (ids, o) => registry.getNodes(ids, o),
 * };
 * ```
 */
export interface PackLookup {
  /** The pack ranked first for a node class, or null when none (GET /platform-nodes/{className}/node). */
  nodeForClass(className: string, options?: { signal?: AbortSignal }): Promise<Node | null>;
  /** Nodes by id, in the order asked, unknown ids left out (GET /nodes?node_id=…). */
  nodes(ids: string[], options?: { signal?: AbortSignal }): Promise<Node[]>;
}

/**
 * Options of {@link findMissingPacks}.
 *
 * @example
 * ```ts
 * const options: FindMissingPacksOptions = { objectInfo: await cloud.getObjectInfo(), signal: AbortSignal.timeout(30_000) };
 * ```
 */
export interface FindMissingPacksOptions {
  /** The server's `object_info`: a class named here is installed and never looked up. */
  objectInfo: Record<string, unknown>;
  /** Cancels the lookups; the call then rejects with an `APIUserAbortError`. */
  signal?: AbortSignal;
}

/** The keys of {@link FindMissingPacksOptions}. */
export const FIND_MISSING_PACKS_OPTIONS = { objectInfo: 1, signal: 1 } as const satisfies OptionKeys<FindMissingPacksOptions>;

/**
 * One pack to install: the registry node, the workflow's classes it provides,
 * and its latest version.
 *
 * @example
 * ```ts
 * for (const p of missing.packs) console.log(`${p.id}@${p.pinnedVersion ?? p.version}: ${p.classTypes.join(', ')}`);
 * ```
 */
export interface MissingPack {
  /** The pack's registry id. */
  id: string;
  /** The pack as the registry describes it. */
  node: Node;
  /** The workflow's classes this pack provides, in order of first appearance. */
  classTypes: string[];
  /** The pack's latest version (`node.latest_version.version`), when the registry gives one. */
  version: string | undefined;
  /** Download URL of the latest version; an empty string from the wire reads as `undefined`. */
  downloadUrl: string | undefined;
  /** The version the workflow was saved with (`properties.ver` of its first node naming this pack, a leading `v` dropped). */
  pinnedVersion?: string;
}

/**
 * A class the server's core provides in a newer release: the workflow's node
 * says `cnr_id: 'comfy-core'` (or `'platform-core'`), so the fix is updating
 * the server, not installing a pack.
 *
 * @example
 * ```ts
 * for (const c of missing.coreUpdate) console.log(`${c.classType} needs the server at ${c.version ?? 'a newer version'}`);
 * ```
 */
export interface CoreClassUpdate {
  classType: string;
  /** `properties.ver` with a leading `v` dropped (`'0.3.10'`); a git hash is kept as given; `undefined` when absent. */
  version: string | undefined;
}

/**
 * A class from a pack outside the registry (the node's `properties.aux_id`,
 * typically `owner/repo` on GitHub).
 *
 * @example
 * ```ts
 * for (const c of missing.outsideRegistry) console.log(`${c.classType}: install ${c.repository ?? c.auxId} by hand`);
 * ```
 */
export interface OutsideRegistryClass {
  classType: string;
  /** `properties.aux_id` as the workflow gives it. */
  auxId: string;
  /** `https://github.com/<auxId>` when `auxId` looks like `owner/repo`; `undefined` otherwise. */
  repository: string | undefined;
}

/**
 * The answer of {@link findMissingPacks}. Each missing class appears in exactly
 * one of the four lists.
 *
 * @example
 * ```ts
 * const { packs, unknown, coreUpdate, outsideRegistry } = await registry.findMissingPacks(workflow, { objectInfo });
 * if (unknown.length) console.warn(`no pack provides: ${unknown.join(', ')}`);
 * ```
 */
export interface MissingPacks {
  /** Packs to install, each with the classes it provides and its latest version. */
  packs: MissingPack[];
  /** Classes no pack in the registry provides. */
  unknown: string[];
  /** Classes the server's core provides in a newer release. */
  coreUpdate: CoreClassUpdate[];
  /** Classes from packs outside the registry. */
  outsideRegistry: OutsideRegistryClass[];
}

/** How many class lookups may be in flight at once, per cache (hence per client). */
const MAX_LOOKUPS = 4;

/** Classes that exist only in the editor: the server never has them and no pack provides them. */
const EDITOR_ONLY = new Set(['Note', 'MarkdownNote', 'Reroute', 'PrimitiveNode']);

/** The ids the host application writes in `cnr_id` for its own core nodes. */
const CORE_IDS = new Set(['comfy-core', 'platform-core']);

/** LiteGraph's bypass mode: such a node is not executed, so it is not needed. */
const MODE_BYPASS = 4;

/** A subgraph instance's `type` is its definition's UUID. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `owner/repo`, the shape the host application writes in `aux_id` for GitHub packs. */
const OWNER_REPO = /^[\w.-]+\/[\w.-]+$/;

/**
 * One limiter per cache, so the "4 at a time" holds for a client across
 * concurrent calls (the cache is the only per-client state handed in). A
 * WeakMap lets it go with the cache.
 */
const limiters = new WeakMap<object, <T>(task: () => Promise<T>) => Promise<T>>();

/** What the workflow says about one missing class: the first node that carries a hint decides. */
interface ClassHint {
  cnrId?: string;
  ver?: string;
  auxId?: string;
}

/**
 * Finds the registry packs that provide the classes of `workflow` the server
 * does not have (every class absent from `options.objectInfo`).
 *
 * Accepts the API format (`{ [id]: { class_type, inputs } }`) and the UI's
 * saved format (`{ nodes: [...], links: [...] }`, with
 * `definitions.subgraphs[].nodes`). In the UI format a node's
 * `properties.cnr_id` names its pack without a lookup; `cnr_id: 'comfy-core'`
 * (or `'platform-core'`) reports the class in `coreUpdate`; `aux_id` in
 * `outsideRegistry`. Bypassed nodes (`mode: 4`), editor-only classes (`Note`,
 * `MarkdownNote`, `Reroute`, `PrimitiveNode`), subgraph instances and
 * `workflow>` group nodes are skipped.
 *
 * Other missing classes are looked up once each with
 * `lookup.nodeForClass`, at most 4 at a time per `cache`; answers and `null`s
 * are kept in `cache` (key: the class name), so a later call makes no request
 * for them. Then all packs are read in one `lookup.nodes(ids)` call.
 *
 * @param workflow An API-format or UI-format workflow (parsed JSON).
 * @param options `objectInfo` of the server, and an optional `signal`.
 * @param lookup The registry reads (the `RegistryClient` supplies them).
 * @param cache Per-client cache of class lookups; failed lookups are removed from it.
 * @returns Packs in the order their first class appears, then the classes no pack provides, core updates and packs outside the registry.
 * @throws {InvalidArgumentError} `workflow` is neither format, or `objectInfo` is not an object; nothing is looked up.
 * @throws Whatever a lookup throws (a connection error, a 5xx): the whole call rejects.
 *
 * @example
 * ```ts
 * const cache = new Map<string, Promise<Node | null>>();
 * const missing = await findMissingPacks(workflow, { objectInfo }, lookup, cache);
 * for (const p of missing.packs) console.log(p.id, p.version, p.downloadUrl, p.classTypes);
 * ```
 */
export async function findMissingPacks(
  workflow: unknown,
  options: FindMissingPacksOptions,
  lookup: PackLookup,
  cache: Map<string, Promise<Node | null>>,
): Promise<MissingPacks> {
  const objectInfo = options?.objectInfo;
  if (!isRecord(objectInfo)) throw new InvalidArgumentError(`must be the server's object_info (an object of node classes), got ${describeValue(objectInfo)}`, 'objectInfo');
  const signal = options.signal;

  // Parse everything first: an invalid workflow must fail before any request.
  const hints = new Map<string, ClassHint>(); // missing classes, in first-appearance order
  for (const { classType, hint } of nodesOf(workflow)) {
    if (Object.hasOwn(objectInfo, classType)) continue;
    const known = hints.get(classType);
    if (!known) hints.set(classType, hint);
    else if (!known.cnrId && !known.auxId && (hint.cnrId || hint.auxId)) hints.set(classType, hint);
  }

  const result: MissingPacks = { packs: [], unknown: [], coreUpdate: [], outsideRegistry: [] };
  // Each missing class resolves to a pack id (or to a final list); kept in order so packs follow the workflow.
  const route: Array<{ classType: string; packId?: string; pin?: string; fromLookup?: Node }> = [];
  const toLookUp: string[] = [];
  for (const [classType, hint] of hints) {
    if (hint.cnrId && CORE_IDS.has(hint.cnrId.toLowerCase())) {
      result.coreUpdate.push({ classType, version: hint.ver });
    } else if (hint.cnrId) {
      route.push({ classType, packId: hint.cnrId, ...(hint.ver !== undefined && { pin: hint.ver }) });
    } else if (hint.auxId) {
      result.outsideRegistry.push({ classType, auxId: hint.auxId, repository: OWNER_REPO.test(hint.auxId) ? `https://github.com/${hint.auxId}` : undefined });
    } else {
      route.push({ classType });
      toLookUp.push(classType);
    }
  }

  if (toLookUp.length) {
    // Fail fast; the limiter checks again before each queued lookup.
    if (signal?.aborted) throw new APIUserAbortError(undefined, { cause: signal.reason });
    let limit = limiters.get(cache);
    if (!limit) limiters.set(cache, (limit = createLimiter(MAX_LOOKUPS)));
    const found = await Promise.all(toLookUp.map((c) => lookUpClass(c, lookup, cache, limit, signal)));
    const byClass = new Map(toLookUp.map((c, i) => [c, found[i] ?? null]));
    for (const r of route) {
      if (r.packId !== undefined) continue;
      const node = byClass.get(r.classType);
      // A node without an id cannot be installed nor fetched: treat the class as unprovided.
      if (node && typeof node.id === 'string' && node.id) {
        r.packId = node.id;
        r.fromLookup = node;
      }
    }
  }

  const ids = [...new Set(route.flatMap((r) => (r.packId === undefined ? [] : [r.packId])))];
  const fetched = ids.length ? await lookup.nodes(ids, signal ? { signal } : undefined) : [];
  const byId = new Map<string, Node>();
  const byLowerId = new Map<string, Node>();
  for (const n of fetched) {
    if (typeof n?.id !== 'string') continue;
    byId.set(n.id, n);
    // The registry normalizes ids (it redirects a differently-cased id): a cnr_id may differ in case.
    if (!byLowerId.has(n.id.toLowerCase())) byLowerId.set(n.id.toLowerCase(), n);
  }

  const packs = new Map<string, MissingPack>();
  for (const r of route) {
    if (r.packId === undefined) {
      result.unknown.push(r.classType);
      continue;
    }
    // A pack the lookup found but the batch left out (banned meanwhile, say) still exists: keep the lookup's copy.
    // A pack named only by cnr_id that the batch does not return is not in the registry: its classes are unknown.
    const node = byId.get(r.packId) ?? byLowerId.get(r.packId.toLowerCase()) ?? r.fromLookup;
    if (!node) {
      result.unknown.push(r.classType);
      continue;
    }
    const id = typeof node.id === 'string' && node.id ? node.id : r.packId;
    let pack = packs.get(id);
    if (!pack) {
      const latest = node.latest_version;
      pack = { id, node, classTypes: [], version: latest?.version || undefined, downloadUrl: latest?.downloadUrl || undefined };
      packs.set(id, pack);
      result.packs.push(pack);
    }
    pack.classTypes.push(r.classType);
    if (r.pin !== undefined && pack.pinnedVersion === undefined) pack.pinnedVersion = r.pin;
  }
  return result;
}

/**
 * The pack for one class, through the cache. The cached promise is stored
 * before it settles, so concurrent calls share one request; a failed lookup is
 * removed so that a retry asks again.
 */
async function lookUpClass(
  classType: string,
  lookup: PackLookup,
  cache: Map<string, Promise<Node | null>>,
  limit: <T>(task: () => Promise<T>) => Promise<T>,
  signal: AbortSignal | undefined,
): Promise<Node | null> {
  for (;;) {
    let pending = cache.get(classType);
    const shared = pending !== undefined;
    if (!pending) {
      const created: Promise<Node | null> = limit(() => {
        // Queued behind other lookups: do not start one the caller no longer wants.
        if (signal?.aborted) return Promise.reject(new APIUserAbortError(undefined, { cause: signal.reason }));
        return lookup.nodeForClass(classType, signal ? { signal } : undefined);
      });
      pending = created;
      cache.set(classType, created);
      created.catch(() => {
        if (cache.get(classType) === created) cache.delete(classType);
      });
    }
    try {
      return await pending;
    } catch (err) {
      // Another call's abort must not fail this one: the entry is gone, ask again with our own signal.
      if (shared && isAbort(err) && !signal?.aborted) continue;
      throw err;
    }
  }
}

/** A FIFO limiter: at most `max` tasks running; the rest wait their turn. */
function createLimiter(max: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: Array<() => void> = [];
  const next = () => {
    active--;
    queue.shift()?.();
  };
  return <T>(task: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      const start = () => {
        active++;
        let running: Promise<T>;
        try {
          running = Promise.resolve(task());
        } catch (err) {
          running = Promise.reject(err);
        }
        running.then(resolve, reject).finally(next);
      };
      if (active < max) start();
      else queue.push(start);
    });
}

/** Every executed node of `workflow` that may need a pack, with the hints the UI format carries. */
function nodesOf(workflow: unknown): Array<{ classType: string; hint: ClassHint }> {
  if (isRecord(workflow) && Array.isArray(workflow.nodes)) return uiNodes(workflow);
  if (isRecord(workflow)) return apiNodes(workflow);
  throw new InvalidArgumentError(`must be an API-format workflow ({ [id]: { class_type, inputs } }) or a saved UI workflow ({ nodes, links }), got ${describeValue(workflow)}`, 'workflow');
}

function apiNodes(workflow: Record<string, unknown>): Array<{ classType: string; hint: ClassHint }> {
  const out: Array<{ classType: string; hint: ClassHint }> = [];
  for (const [id, node] of Object.entries(workflow)) {
    const classType = isRecord(node) ? node.class_type : undefined;
    if (typeof classType !== 'string' || !classType) {
      throw new InvalidArgumentError(
        `must be an API-format workflow ({ [id]: { class_type, inputs } }) or a saved UI workflow ({ nodes, links }); node ${JSON.stringify(id)} has no class_type (got ${describeValue(node)})`,
        'workflow',
      );
    }
    if (!skipped(classType)) out.push({ classType, hint: {} });
  }
  return out;
}

function uiNodes(workflow: Record<string, unknown>): Array<{ classType: string; hint: ClassHint }> {
  const lists: Array<{ where: string; nodes: unknown[] }> = [{ where: 'nodes', nodes: workflow.nodes as unknown[] }];
  const subgraphIds = new Set<string>();
  const subgraphs = isRecord(workflow.definitions) ? workflow.definitions.subgraphs : undefined;
  if (Array.isArray(subgraphs)) {
    subgraphs.forEach((sg, i) => {
      if (!isRecord(sg)) return;
      if (typeof sg.id === 'string') subgraphIds.add(sg.id);
      if (Array.isArray(sg.nodes)) lists.push({ where: `definitions.subgraphs[${i}].nodes`, nodes: sg.nodes });
    });
  }
  const out: Array<{ classType: string; hint: ClassHint }> = [];
  for (const { where, nodes } of lists) {
    nodes.forEach((node, i) => {
      const type = isRecord(node) ? node.type : undefined;
      if (typeof type !== 'string' || !type) {
        throw new InvalidArgumentError(`must be a saved UI workflow whose nodes each have a type; ${where}[${i}] has none (got ${describeValue(node)})`, 'workflow');
      }
      const n = node as Record<string, unknown>;
      if (n.mode === MODE_BYPASS || skipped(type) || subgraphIds.has(type)) return;
      const props = isRecord(n.properties) ? n.properties : {};
      const hint: ClassHint = {};
      if (typeof props.cnr_id === 'string' && props.cnr_id) hint.cnrId = props.cnr_id;
      if (typeof props.aux_id === 'string' && props.aux_id) hint.auxId = props.aux_id;
      const ver = typeof props.ver === 'string' ? normalizeVersion(props.ver) : undefined;
      if (ver !== undefined) hint.ver = ver;
      out.push({ classType: type, hint });
    });
  }
  return out;
}

/** Editor-only classes, subgraph instances (a UUID) and legacy group nodes never reach the server as such. */
function skipped(classType: string): boolean {
  return EDITOR_ONLY.has(classType) || classType.startsWith('workflow>') || UUID.test(classType);
}

/** `v0.3.10` → `0.3.10`; a git hash (hex, never starting with `v`) or any other string is kept; `''` → undefined. */
function normalizeVersion(ver: string): string | undefined {
  const v = ver.trim();
  if (!v) return undefined;
  return /^v\d/i.test(v) ? v.slice(1) : v;
}

function isAbort(err: unknown): boolean {
  return err instanceof APIUserAbortError || (err instanceof Error && err.name === 'AbortError');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
