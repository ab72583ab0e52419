/**
 * The cloud workflow service of the emulator (`cloud.md`): API keys and their
 * billing states, content-addressed uploads, `object_info`, submissions
 * validated like the local counterpart server, the job engine
 * (`cloud-jobs.ts`), the queue, and downloads through signed URLs. The
 * WebSocket side lives in `ws.ts` and listens to {@link CloudState.subscribe}.
 *
 * @module
 */
import { HttpError, sendJson, type RequestContext, type Route } from './http.ts';
import { contentTypeFor, extensionOf, FileStore, UrlSigner, type StoredFile } from './cloud-files.ts';
import { JobEngine, type CloudEvent, type FailSpec, type Job, type OutputRef } from './cloud-jobs.ts';
import { readUpload } from './cloud-multipart.ts';
import { buildObjectInfo, PromptRejection, validatePrompt, type NodeDefinition } from './cloud-nodes.ts';
import { createRandom } from './seed.ts';

export { EXCEPTION_TYPES } from './cloud-jobs.ts';
export type { CloudEvent, FailSpec, Job, JobStatusValue, NodeOutput, OutputRef } from './cloud-jobs.ts';
export type { NodeDefinition, PromptErrorBody } from './cloud-nodes.ts';

/** How a key answers: normally, or as 401 / 402 / 429 on every `/api` route. */
export type KeyMode = 'ok' | 'unauthorized' | 'insufficient_credits' | 'inactive';

/** Configuration of one API key. */
export interface ApiKeyConfig {
  /** Default `ok`. */
  mode?: KeyMode;
  /** Jobs running at once for this key (the subscription tier's limit). Default: the `parallel` option. */
  parallel?: number;
}

/** The default API key. */
export const EMULATOR_API_KEY = 'emulator-key';

/** Default keys: {@link EMULATOR_API_KEY}, `ok`, two jobs in parallel. */
export const DEFAULT_API_KEYS: Readonly<Record<string, ApiKeyConfig>> = Object.freeze({ [EMULATOR_API_KEY]: { mode: 'ok', parallel: 2 } });

/** Options of {@link CloudState}. Every number can also be changed later on the state. */
export interface CloudOptions {
  /** API keys; default {@link DEFAULT_API_KEYS}. */
  apiKeys?: Record<string, ApiKeyConfig>;
  /** Simulated duration of one node step, ms. Default 30. */
  stepMs?: number;
  /** `progress` steps of nodes that report progress (transforms, SaveImage, partner nodes). Default 3. */
  progressSteps?: number;
  /** Parallel limit of keys configured without one. Default 2. */
  parallel?: number;
  /** Largest upload, bytes; larger ones answer 400. `Infinity` disables the limit. Default 100 MiB (the local server's `max_upload_size`). */
  maxUploadBytes?: number;
  /** Uploads up to this size keep their bytes (downloadable); larger ones are only hashed and counted. Default 8 MiB. */
  retainUploadBytes?: number;
  /** Total bytes of files kept in memory; the oldest are evicted beyond it. Default 256 MiB. */
  storeBytes?: number;
  /** `redirect` (default): `/api/view` answers 302 to a signed URL, as the cloud does; `direct`: 200 with the file, as the local server does. */
  viewMode?: 'redirect' | 'direct';
  /** Lifetime of signed URLs, ms. Default 60000. */
  signedUrlTtlMs?: number;
  /** Finished jobs remembered (status, outputs). Default 1000. */
  historyLimit?: number;
  /** Seed of the PRNG behind probabilistic socket drops. */
  seed?: number;
}

/** Options of {@link CloudState.dropSockets}. */
export interface SocketDropOptions {
  /** Before each message to a socket, terminate it instead with this probability (0..1; seeded PRNG). */
  probability?: number;
  /** Terminate a socket once it has been sent this many messages since the switch was set. */
  afterMessages?: number;
  /** Switch off after this many drops. Default: stays on until `dropSockets(null)`. */
  times?: number;
  /** Only sockets of this API key. */
  key?: string;
}

/** Socket fault switches, read by `ws.ts` on every send. */
export interface SocketFaults {
  drop: (SocketDropOptions & { generation: number; dropped: number }) | null;
  /** Until this time (ms since epoch) nothing is sent on any socket. */
  silentUntil: number;
  /** While silent, hold messages and flush them afterwards (instead of discarding them). */
  holdWhileSilent: boolean;
  /** The next `count` upgrades are refused with `status`. */
  rejectUpgrades: { count: number; status: number } | null;
}

/** Control messages from the state to the socket layer. */
export type SocketControl = { action: 'drop-all'; key: string | undefined } | { action: 'silence'; until: number };

const MiB = 1024 * 1024;

/**
 * The cloud's in-memory state, exposed as `emulator.cloud`: tests configure
 * keys, inject failures and socket faults, and inspect jobs and files here.
 */
export class CloudState {
  /** API key → its configuration; change through {@link setKeyMode}/{@link setParallel}/{@link addKey}. */
  readonly keys = new Map<string, Required<ApiKeyConfig>>();
  readonly files: FileStore;
  readonly engine: JobEngine;
  readonly signer = new UrlSigner();
  readonly socketFaults: SocketFaults = { drop: null, silentUntil: 0, holdWhileSilent: false, rejectUpgrades: null };
  stepMs: number;
  progressSteps: number;
  parallel: number;
  maxUploadBytes: number;
  retainUploadBytes: number;
  viewMode: 'redirect' | 'direct';
  signedUrlTtlMs: number;
  /** PRNG of the probabilistic socket faults. */
  random: () => number;
  /** Clock of signed-URL expiry, replaceable in tests. */
  now: () => number = () => Date.now();
  readonly #initialKeys: Record<string, ApiKeyConfig>;
  readonly #listeners = new Set<(event: CloudEvent) => void>();
  readonly #controls = new Set<(control: SocketControl) => void>();
  readonly #seed: number;
  #dropGeneration = 0;

  constructor(options: CloudOptions = {}) {
    this.stepMs = options.stepMs ?? 30;
    this.progressSteps = options.progressSteps ?? 3;
    this.parallel = options.parallel ?? 2;
    this.maxUploadBytes = options.maxUploadBytes ?? 100 * MiB;
    this.retainUploadBytes = options.retainUploadBytes ?? 8 * MiB;
    this.viewMode = options.viewMode ?? 'redirect';
    this.signedUrlTtlMs = options.signedUrlTtlMs ?? 60_000;
    this.#seed = options.seed ?? 0xc10d;
    this.random = createRandom(this.#seed);
    this.#initialKeys = options.apiKeys ?? DEFAULT_API_KEYS;
    this.files = new FileStore({ maxBytes: options.storeBytes ?? 256 * MiB, maxFiles: 10_000 });
    this.engine = new JobEngine({
      files: this.files,
      emit: (event) => this.#emit(event),
      parallelOf: (key) => this.keys.get(key)?.parallel ?? this.parallel,
      modeOf: (key) => this.keys.get(key)?.mode,
      timing: () => ({ stepMs: this.stepMs, progressSteps: this.progressSteps }),
      historyLimit: options.historyLimit ?? 1000,
    });
    this.#loadKeys();
  }

  // --- keys ---------------------------------------------------------------

  /** Adds or replaces a key. */
  addKey(key: string, config: ApiKeyConfig = {}): void {
    this.keys.set(key, { mode: config.mode ?? 'ok', parallel: config.parallel ?? this.parallel });
    this.engine.pump(key);
  }

  /** Switches a key to answer normally (`ok`), 401, 402 (`insufficient_credits`) or 429 (`inactive`). Unknown keys are added. */
  setKeyMode(key: string, mode: KeyMode): void {
    const cfg = this.keys.get(key);
    if (cfg) cfg.mode = mode;
    else this.addKey(key, { mode });
  }

  /** Changes a key's parallel limit; queued jobs start at once if slots opened. */
  setParallel(key: string, parallel: number): void {
    const cfg = this.keys.get(key);
    if (!cfg) throw new Error('Unknown API key');
    cfg.parallel = parallel;
    this.engine.pump(key);
  }

  /** The mode of a key, undefined when unknown. */
  keyMode(key: string): KeyMode | undefined {
    return this.keys.get(key)?.mode;
  }

  // --- files --------------------------------------------------------------

  /** Stores a file directly (e.g. an input for `LoadImage` without an upload). */
  addFile(filename: string, data: Uint8Array | string, type = 'input'): OutputRef {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    this.files.put({ name: filename, type, size: bytes.length, contentType: contentTypeFor(filename), data: Buffer.from(bytes), created: Date.now() });
    return { filename, subfolder: '', type };
  }

  /**
   * Registers a large output whose bytes are generated while it is served
   * (a deterministic pattern), for download benchmarks without the memory.
   */
  addSyntheticOutput(filename: string, sizeBytes: number, options: { type?: string; contentType?: string } = {}): OutputRef {
    const type = options.type ?? 'output';
    this.files.addSynthetic(filename, sizeBytes, type, options.contentType ?? 'application/octet-stream');
    return { filename, subfolder: '', type };
  }

  /** Whether `LoadImage.image` names a stored input (`name`, or `name [input|temp|output]` like the real server). */
  hasInputFile(value: string): boolean {
    const m = /^(.*) \[(input|temp|output)\]$/.exec(value);
    return m ? this.files.has(m[1] ?? '', m[2] ?? 'input') : this.files.has(value, 'input');
  }

  /** The `object_info` map. */
  objectInfo(): Record<string, NodeDefinition> {
    return buildObjectInfo(this.files.names('input'));
  }

  // --- jobs ---------------------------------------------------------------

  /**
   * Validates and queues a submission body for `key`. Throws
   * {@link PromptRejection} (HTTP 400, the local server's error shape).
   */
  submit(key: string, body: unknown): Job {
    const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
    const valid = validatePrompt(b.prompt, this.objectInfo(), (name) => this.hasInputFile(name));
    const extra = b.extra_data;
    if (extra !== undefined && (extra === null || typeof extra !== 'object' || Array.isArray(extra))) {
      throw new PromptRejection('invalid_prompt', 'extra_data must be an object', `Got ${JSON.stringify(extra)}`);
    }
    const { api_key_platform_org: partnerKey, ...extraData } = (extra ?? {}) as Record<string, unknown>;
    if (valid.partnerNodes.length > 0) {
      const nodes = valid.partnerNodes.map((id) => `'#${id}' (${valid.prompt[id]!.class_type})`).join(', ');
      if (typeof partnerKey !== 'string' || partnerKey === '') {
        throw new PromptRejection(
          'missing_partner_api_key',
          'Workflow contains partner nodes; extra_data.api_key_platform_org (the account API key) is required',
          `Partner nodes: ${nodes}`,
        );
      }
      if (!this.keys.has(partnerKey)) {
        throw new PromptRejection('invalid_partner_api_key', 'extra_data.api_key_platform_org is not a valid API key', `Partner nodes: ${nodes}`);
      }
    }
    if (typeof b.client_id === 'string') extraData.client_id = b.client_id;
    extraData.create_time = Date.now();
    return this.engine.submit(key, valid, extraData, typeof partnerKey === 'string' ? partnerKey : undefined);
  }

  /**
   * Makes the next job of `key` that executes fail with `exceptionType` (any
   * of {@link EXCEPTION_TYPES}, or another string) at its first node, or at
   * `nodeId`. The job skips the cache. Calls queue up.
   */
  failNextWith(key: string, exceptionType: string, options: { message?: string; nodeId?: string } = {}): void {
    const spec: FailSpec = { exceptionType, ...options };
    this.engine.failNextWith(key, spec);
  }

  // --- events and socket faults --------------------------------------------

  /** Listens to every job event of every key; returns the unsubscribe function. */
  subscribe(listener: (event: CloudEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** @internal Used by `ws.ts`. */
  onSocketControl(listener: (control: SocketControl) => void): () => void {
    this.#controls.add(listener);
    return () => this.#controls.delete(listener);
  }

  /**
   * Terminates sockets (abruptly, no close frame: a network drop) at random
   * moments or after a number of messages; `null` switches it off.
   *
   * @example
   * ```ts
   * emulator.cloud.dropSockets({ afterMessages: 5, times: 1 }); // one drop mid-job
   * emulator.cloud.dropSockets({ probability: 0.1 });            // chaos, seeded
   * ```
   */
  dropSockets(options: SocketDropOptions | null): void {
    this.socketFaults.drop = options ? { ...options, generation: ++this.#dropGeneration, dropped: 0 } : null;
  }

  /** Terminates every open socket now (of one key, when given). */
  dropAllSockets(key?: string): void {
    for (const c of this.#controls) c({ action: 'drop-all', key });
  }

  /**
   * Sends nothing on any socket for `ms` (sockets stay open): exercises a
   * client's idle watchdog. Messages in that window are discarded, or held
   * and flushed afterwards with `{ hold: true }`.
   */
  silenceSockets(ms: number, options: { hold?: boolean } = {}): void {
    this.socketFaults.silentUntil = Date.now() + ms;
    this.socketFaults.holdWhileSilent = options.hold ?? false;
    for (const c of this.#controls) c({ action: 'silence', until: this.socketFaults.silentUntil });
  }

  /** Refuses the next `count` WebSocket upgrades with HTTP `status` (default 503). */
  rejectSocketUpgrades(count: number, status = 503): void {
    this.socketFaults.rejectUpgrades = count > 0 ? { count, status } : null;
  }

  /** Switches every socket fault off. */
  resetSocketFaults(): void {
    this.socketFaults.drop = null;
    this.socketFaults.silentUntil = 0;
    this.socketFaults.holdWhileSilent = false;
    this.socketFaults.rejectUpgrades = null;
    for (const c of this.#controls) c({ action: 'silence', until: 0 });
  }

  /** Restores the initial keys, forgets jobs, files and caches, and switches socket faults off. */
  reset(): void {
    this.engine.reset();
    this.files.clear();
    this.keys.clear();
    this.#loadKeys();
    this.resetSocketFaults();
    this.random = createRandom(this.#seed);
  }

  /** Stops every job timer for good (the emulator's close). */
  close(): void {
    this.engine.close();
    this.#listeners.clear();
    this.#controls.clear();
  }

  #loadKeys(): void {
    for (const [key, cfg] of Object.entries(this.#initialKeys)) this.keys.set(key, { mode: cfg.mode ?? 'ok', parallel: cfg.parallel ?? this.parallel });
  }

  #emit(event: CloudEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure must not stop a job.
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Routes

/**
 * Checks `X-API-Key`: 401 when missing, unknown or switched to
 * `unauthorized`; 402 `InsufficientCredits`; 429 `SubscriptionInactive`.
 */
function authorize(state: CloudState, ctx: RequestContext): string {
  const raw = ctx.headers['x-api-key'];
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  const mode = key ? state.keyMode(key) : undefined;
  if (!key || mode === undefined || mode === 'unauthorized') throw new HttpError(401, key ? 'Invalid API key' : 'Missing X-API-Key header', 'unauthorized');
  if (mode === 'insufficient_credits') throw new HttpError(402, 'Insufficient credits to run workflows; top up the account balance', 'InsufficientCredits');
  if (mode === 'inactive') throw new HttpError(429, 'The subscription is not active', 'SubscriptionInactive');
  return key;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function handleUpload(state: CloudState, ctx: RequestContext, mask: boolean): Promise<void> {
  authorize(state, ctx);
  const { fields, file } = await readUpload(ctx.req, ctx.res, {
    fileField: 'image',
    maxFileBytes: state.maxUploadBytes,
    retainBytes: state.retainUploadBytes,
  });
  const type = fields.type || 'input';
  if (type !== 'input' && type !== 'temp') throw new HttpError(400, `type must be 'input' or 'temp', got ${JSON.stringify(type)}`);
  if (fields.overwrite !== undefined && !/^(true|false|1|0)$/i.test(fields.overwrite)) {
    throw new HttpError(400, `overwrite must be 'true' or 'false', got ${JSON.stringify(fields.overwrite)}`);
  }
  if (mask) {
    const rawRef = fields.original_ref;
    if (rawRef === undefined) throw new HttpError(400, "Missing part 'original_ref'");
    let ref: unknown;
    try {
      ref = JSON.parse(rawRef);
    } catch {
      throw new HttpError(400, 'original_ref is not valid JSON');
    }
    if (!isObject(ref) || typeof ref.filename !== 'string' || ref.filename === '') throw new HttpError(400, 'original_ref must be an object with a filename');
    const refType = typeof ref.type === 'string' && ref.type ? ref.type : 'input';
    if (!state.files.has(ref.filename, refType)) throw new HttpError(400, `original_ref names an unknown file: ${ref.filename} (${refType})`);
  }
  // Content-addressed: identical bytes get the same name, whatever they were called.
  const name = file.sha256 + extensionOf(file.filename);
  const stored: StoredFile = {
    name,
    type,
    size: file.size,
    contentType: contentTypeFor(name, file.contentType ?? 'application/octet-stream'),
    sha256: file.sha256,
    created: Date.now(),
    ...(file.data ? { data: file.data } : {}),
  };
  state.files.put(stored);
  sendJson(ctx.res, 200, { name, subfolder: '', type });
}

/**
 * The cloud routes. Decisions where the spec is silent:
 *
 * - Every `/api` route checks the key and its mode (401/402/429); error bodies
 *   are `{ error, message }`, except `POST /api/prompt` rejections, which use
 *   the local server's `{ error: { type, message, details, extra_info }, node_errors }`.
 * - Uploads: name = sha256 of the bytes + the original extension; `subfolder`
 *   ignored (`''`); above `maxUploadBytes` → 400 `file_too_large`.
 * - `GET /api/job/{id}/status`: `{ status }`, plus `outputs` when completed
 *   and `error` when failed; 404 for unknown ids and other keys' jobs.
 * - `GET /api/queue`: the key's jobs as `[number, prompt_id, prompt, extra_data, outputs_to_execute]`.
 * - `POST /api/queue`: `{ delete: [ids] }` and/or `{ clear: true }` → `{ deleted }`;
 *   ids of other keys and finished jobs are ignored. Cancelled jobs get
 *   `execution_interrupted` (running ones also `executing` null).
 * - `POST /api/interrupt` (optional `{ prompt_id }`) → `{}`.
 * - `GET /api/view`: 302 to `/signed/<token>?expires&sig` (or 200 in `direct`
 *   mode); the signed route refuses any `X-API-Key`/`Authorization` with 403,
 *   a bad signature with 403, an expired one with 410.
 */
export function cloudRoutes(state: CloudState): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/object_info',
      handler: (ctx) => {
        authorize(state, ctx);
        sendJson(ctx.res, 200, state.objectInfo());
      },
    },
    { method: 'POST', path: '/api/upload/image', handler: (ctx) => handleUpload(state, ctx, false) },
    { method: 'POST', path: '/api/upload/mask', handler: (ctx) => handleUpload(state, ctx, true) },
    {
      method: 'POST',
      path: '/api/prompt',
      bodyLimit: 16 * MiB,
      handler: async (ctx) => {
        const key = authorize(state, ctx);
        try {
          let body: unknown;
          try {
            body = await ctx.readJson();
          } catch (err) {
            if (err instanceof HttpError && err.status !== 413) throw new PromptRejection('invalid_prompt', err.message);
            throw err;
          }
          if (body !== undefined && !isObject(body)) throw new PromptRejection('invalid_prompt', 'The request body must be a JSON object');
          const job = state.submit(key, body);
          sendJson(ctx.res, 200, { prompt_id: job.prompt_id, number: job.number, node_errors: {} });
        } catch (err) {
          if (!(err instanceof PromptRejection)) throw err;
          sendJson(ctx.res, 400, err.body);
        }
      },
    },
    {
      method: 'GET',
      path: '/api/job/:promptId/status',
      handler: (ctx) => {
        const key = authorize(state, ctx);
        const job = state.engine.get(key, ctx.params.promptId ?? '');
        if (!job) throw new HttpError(404, 'Job not found');
        const body: Record<string, unknown> = { status: job.status };
        if (job.status === 'completed') body.outputs = structuredClone(job.outputs);
        if (job.status === 'failed' && job.error) body.error = { ...job.error };
        sendJson(ctx.res, 200, body);
      },
    },
    {
      method: 'GET',
      path: '/api/queue',
      handler: (ctx) => {
        const key = authorize(state, ctx);
        sendJson(ctx.res, 200, structuredClone(state.engine.queue(key)));
      },
    },
    {
      method: 'POST',
      path: '/api/queue',
      handler: async (ctx) => {
        const key = authorize(state, ctx);
        const body = (await ctx.readJson()) ?? {};
        if (!isObject(body)) throw new HttpError(400, 'Body must be a JSON object');
        const del = body.delete;
        if (del !== undefined && (!Array.isArray(del) || del.some((id) => typeof id !== 'string'))) {
          throw new HttpError(400, 'delete must be an array of prompt_id strings');
        }
        if (body.clear !== undefined && typeof body.clear !== 'boolean') throw new HttpError(400, 'clear must be a boolean');
        const deleted = [...(del ? state.engine.cancel(key, del as string[]) : []), ...(body.clear ? state.engine.clear(key) : [])];
        sendJson(ctx.res, 200, { deleted });
      },
    },
    {
      method: 'POST',
      path: '/api/interrupt',
      handler: async (ctx) => {
        const key = authorize(state, ctx);
        const body = await ctx.readJson();
        const only = isObject(body) && typeof body.prompt_id === 'string' ? body.prompt_id : undefined;
        state.engine.interrupt(key, only);
        sendJson(ctx.res, 200, {});
      },
    },
    {
      method: 'GET',
      path: '/api/view',
      handler: async (ctx) => {
        authorize(state, ctx);
        const filename = ctx.query.get('filename');
        if (!filename) throw new HttpError(400, 'filename is required');
        const type = ctx.query.get('type') || 'output';
        const file = state.files.get(filename, type);
        if (!file) throw new HttpError(404, `No ${type} file named ${filename}`);
        if (state.viewMode === 'direct') {
          await state.files.serve(ctx.req, ctx.res, file);
          return;
        }
        const location = ctx.origin + state.signer.sign(filename, type, state.now() + state.signedUrlTtlMs);
        ctx.res.writeHead(302, { Location: location, 'Content-Length': '0', 'Cache-Control': 'no-store' });
        ctx.res.end();
      },
    },
    {
      method: 'GET',
      path: '/signed/:token',
      handler: async (ctx) => {
        // The signed URL is fetched without credentials; one that arrives with them means the client leaked its key.
        if (ctx.headers['x-api-key'] !== undefined || ctx.headers.authorization !== undefined) {
          throw new HttpError(403, 'Signed URLs must be fetched without X-API-Key or Authorization', 'forbidden');
        }
        const target = state.signer.verify(ctx.params.token ?? '', ctx.query, state.now());
        if (target === 'forbidden') throw new HttpError(403, 'Invalid signature', 'forbidden');
        if (target === 'expired') throw new HttpError(410, 'Signed URL expired', 'expired');
        const file = state.files.get(target.filename, target.type);
        if (!file) throw new HttpError(404, `No ${target.type} file named ${target.filename}`);
        await state.files.serve(ctx.req, ctx.res, file);
      },
    },
  ];
}
