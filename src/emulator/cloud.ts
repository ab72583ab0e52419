/**
 * The state of the emulator's cloud workflow service (`cloud.md`): API keys
 * and their billing states, content-addressed files, `object_info`,
 * submissions validated like the local counterpart server, the job engine
 * (`cloud-jobs.ts`), the knobs, and the socket fault switches. The server it
 * imitates is its {@link CloudState.personality} (`personality.ts`). The HTTP
 * routes live in `cloud-routes.ts`; the WebSocket side lives in `ws.ts` and
 * listens to {@link CloudState.subscribe}.
 *
 * @module
 */
import { contentTypeFor, FileStore, UrlSigner } from './cloud-files.ts';
import { JobEngine, type CloudEvent, type FailSpec, type Job, type OutputRef, type RawFailure } from './cloud-jobs.ts';
import { buildObjectInfo, PromptRejection, validatePrompt, type NodeDefinition } from './cloud-nodes.ts';
import type { RecordClock } from './cloud-records.ts';
import { LOCAL_LANE, resolvePersonality, type Personality, type PersonalityName } from './personality.ts';
import { createRandom } from './random.ts';

export { EXCEPTION_TYPES } from './cloud-jobs.ts';
export type { CloudEvent, FailSpec, Job, JobMessage, JobStatusValue, NodeOutput, OutputRef, RawFailure } from './cloud-jobs.ts';
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
  /**
   * The server imitated: `cloud` (default; the live service), `spec` (what
   * `cloud.md` documents) or `local` (a self-hosted server), or a {@link Personality} object such as
   * `{ ...PERSONALITIES.local, jobsApi: false }`. Fixed for the state's life.
   */
  personality?: PersonalityName | Personality;
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
  /** `redirect`: `/api/view` answers 302 to a signed URL, as the cloud does; `direct`: 200 with the file, as the local server does. Default: the personality's. */
  viewMode?: 'redirect' | 'direct';
  /** A finished job's outputs appear in its REST answers this long after its end, ms. Default: the personality's (`cloud` 150, others 0). */
  outputsDelayMs?: number;
  /** Lifetime of signed URLs, ms. Default 60000. */
  signedUrlTtlMs?: number;
  /** Finished jobs remembered (status, outputs). Default 1000. */
  historyLimit?: number;
  /** Seed of the PRNG behind probabilistic socket drops. */
  seed?: number;
  /** The initial {@link CloudState.lateDeletes}. Default false. */
  lateDeletes?: boolean;
  /** The initial {@link CloudState.ignoreInterrupts}. Default false. */
  ignoreInterrupts?: boolean;
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
  /** Every upgrade is accepted, and the socket closed at once with this code and reason. */
  closeOnOpen: { code: number; reason: string } | null;
}

/** Control messages from the state to the socket layer. */
export type SocketControl = { action: 'drop-all'; key: string | undefined } | { action: 'silence'; until: number };

const MiB = 1024 * 1024;

/**
 * The cloud's in-memory state, exposed as `emulator.cloud`: tests configure
 * keys, inject failures and socket faults, and inspect jobs and files here.
 */
export class CloudState {
  /** The server imitated (frozen; chosen at construction). */
  readonly personality: Personality;
  /** API key → its configuration; change through {@link setKeyMode}/{@link setParallel}/{@link addKey}. */
  readonly keys = new Map<string, Required<ApiKeyConfig>>();
  readonly files: FileStore;
  readonly engine: JobEngine;
  readonly signer = new UrlSigner();
  readonly socketFaults: SocketFaults = { drop: null, silentUntil: 0, holdWhileSilent: false, rejectUpgrades: null, closeOnOpen: null };
  stepMs: number;
  progressSteps: number;
  parallel: number;
  maxUploadBytes: number;
  retainUploadBytes: number;
  viewMode: 'redirect' | 'direct';
  /** A finished job's outputs appear in its REST answers (status, records, history) this long after its end, ms. */
  outputsDelayMs: number;
  signedUrlTtlMs: number;
  /** PRNG of the probabilistic socket faults. */
  random: () => number;
  /**
   * `POST /api/queue { delete }` naming a pending job is held until that job
   * has left the queue (started, or stopped otherwise), then applied and
   * answered: the race a queue delete loses against the job's start. On a
   * server whose delete leaves running jobs alone (`deleteRunning: false`,
   * the local server) it then does nothing, while an interrupt sent with it
   * found the job still pending.
   *
   * @example
   * ```ts
   * const emu = await startEmulator({ personality: { ...PERSONALITIES.local, atomicCancel: false }, cloud: { lateDeletes: true } });
   * ```
   */
  lateDeletes: boolean;
  /**
   * `POST /api/interrupt` is answered as usual and stops nothing: a running
   * node that never checks for interrupts (a long call into native code).
   * With `deleteRunning: false` a running job is then beyond every stop but
   * the atomic cancel.
   */
  ignoreInterrupts: boolean;
  /** Clock of signed-URL expiry, replaceable in tests. */
  now: () => number = () => Date.now();
  readonly #initialKeys: Record<string, ApiKeyConfig>;
  readonly #listeners = new Set<(event: CloudEvent) => void>();
  readonly #controls = new Set<(control: SocketControl) => void>();
  readonly #seed: number;
  #dropGeneration = 0;

  constructor(options: CloudOptions = {}) {
    this.personality = resolvePersonality(options.personality);
    this.stepMs = options.stepMs ?? 30;
    this.progressSteps = options.progressSteps ?? 3;
    this.parallel = options.parallel ?? 2;
    this.maxUploadBytes = options.maxUploadBytes ?? 100 * MiB;
    this.retainUploadBytes = options.retainUploadBytes ?? 8 * MiB;
    this.viewMode = options.viewMode ?? this.personality.viewMode;
    this.outputsDelayMs = options.outputsDelayMs ?? this.personality.outputsDelayMs;
    this.signedUrlTtlMs = options.signedUrlTtlMs ?? 60_000;
    this.lateDeletes = options.lateDeletes ?? false;
    this.ignoreInterrupts = options.ignoreInterrupts ?? false;
    this.#seed = options.seed ?? 0xc10d;
    this.random = createRandom(this.#seed);
    this.#initialKeys = options.apiKeys ?? DEFAULT_API_KEYS;
    this.files = new FileStore({ maxBytes: options.storeBytes ?? 256 * MiB, maxFiles: 10_000 });
    this.engine = new JobEngine({
      files: this.files,
      emit: (event) => this.#emit(event),
      parallelOf: (key) => this.keys.get(key)?.parallel ?? this.personality.parallel ?? this.parallel,
      modeOf: (key) => this.keys.get(key)?.mode,
      timing: () => ({ stepMs: this.stepMs, progressSteps: this.progressSteps }),
      historyLimit: options.historyLimit ?? 1000,
      personality: this.personality,
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

  /**
   * The lane (queue, cache, sockets) of a key: the key itself, or
   * {@link LOCAL_LANE} for everyone when the personality requires no key.
   */
  laneOf(key: string): string {
    return this.personality.requireKey ? key : LOCAL_LANE;
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
   * Validates and queues a submission body for `key` (for the shared lane when no key is required). Throws
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
    // Like the local server: the client's id is taken as it is (a repeat queues the job again under it).
    const chosen = this.personality.chosenIds && typeof b.prompt_id === 'string' && b.prompt_id !== '' ? b.prompt_id : undefined;
    // `create_time` in ms, as the local server stores it.
    extraData.create_time = Date.now();
    return this.engine.submit(this.laneOf(key), valid, extraData, typeof partnerKey === 'string' ? partnerKey : undefined, chosen);
  }

  /**
   * Makes the next job of `key` (of the shared lane when no key is required)
   * that executes fail with `exceptionType` (any of {@link EXCEPTION_TYPES},
   * or another string) at its first node, or at `nodeId`. `rawStatus` is the
   * live cloud's terminal state (`error` by default; `lost` ends the job
   * failed without any event and without `execution_error`). The job skips
   * the cache. Calls queue up.
   */
  failNextWith(key: string, exceptionType: string, options: { message?: string; nodeId?: string; rawStatus?: RawFailure } = {}): void {
    const spec: FailSpec = { exceptionType, ...options };
    this.engine.failNextWith(this.laneOf(key), spec);
  }

  /** Resolves once none of `ids` is a pending job of `key` (started, stopped, removed or unknown). */
  untilNotPending(key: string, ids: readonly string[]): Promise<void> {
    const waiting = () => ids.some((id) => this.engine.get(key, id)?.status === 'pending');
    if (!waiting()) return Promise.resolve();
    // Every change of a job's place in the queue sends a `status` event: the check runs on each.
    return new Promise((resolve) => {
      const off = this.subscribe(() => {
        if (waiting()) return;
        off();
        resolve();
      });
    });
  }

  /** Now, and how late outputs are persisted: what the record renderers need. */
  recordClock(): RecordClock {
    return { now: Date.now(), outputsDelayMs: this.outputsDelayMs };
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
    const key = options?.key === undefined ? {} : { key: this.laneOf(options.key) };
    this.socketFaults.drop = options ? { ...options, ...key, generation: ++this.#dropGeneration, dropped: 0 } : null;
  }

  /** Terminates every open socket now (of one key, when given; every socket of the shared lane when no key is required). */
  dropAllSockets(key?: string): void {
    const lane = key === undefined ? undefined : this.laneOf(key);
    for (const c of this.#controls) c({ action: 'drop-all', key: lane });
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

  /**
   * Accepts every WebSocket upgrade and closes the socket at once, before any
   * message, with `code` (default 1001, going away) and `reason`: a proxy or a
   * load balancer that lets the upgrade through and hangs up. With 1008 or a
   * 4000–4999 code, a server that refuses the token after the upgrade. `null`
   * switches it off.
   *
   * @example
   * ```ts
   * emulator.cloud.closeSocketsOnOpen();                                   // a reconnect storm, if the client allows one
   * emulator.cloud.closeSocketsOnOpen({ code: 4001, reason: 'Invalid token' }); // a refusal
   * ```
   */
  closeSocketsOnOpen(options: { code?: number; reason?: string } | null = {}): void {
    this.socketFaults.closeOnOpen = options ? { code: options.code ?? 1001, reason: options.reason ?? '' } : null;
  }

  /** Switches every socket fault off. */
  resetSocketFaults(): void {
    this.socketFaults.drop = null;
    this.socketFaults.silentUntil = 0;
    this.socketFaults.holdWhileSilent = false;
    this.socketFaults.rejectUpgrades = null;
    this.socketFaults.closeOnOpen = null;
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
