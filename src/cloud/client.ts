/**
 * `CloudClient`: the cloud workflow service's REST endpoints (`cloud.md`).
 * Realtime (`connect`, `run`, `waitForJob`) builds on these in `socket.ts`
 * and `run.ts`.
 *
 * @module
 */
import { checkArgs, checkFunction, checkId, checkOptions, joinKeys, type OptionKeys } from '../args.ts';
import { APIError, DownloadError, InvalidArgumentError, SubmissionError, UnsupportedError, WorkflowValidationError } from '../errors.ts';
import { platform } from '../platform/node.ts';
import type {
  FileRef,
  JobList,
  ListJobsParams,
  ObjectInfo,
  Queue,
  SubmissionResponse,
  UploadResponse,
  Workflow,
} from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import { checkInterval, checkRequestOptions, checkTimeout, CLIENT_OPTIONS, fromEnv, REQUEST_OPTIONS, requestOptionsOf, type ClientOptions, type Credential, type RequestOptions } from '../transport/options.ts';
import { PagePromise } from '../transport/pages.ts';
import { APIPromise, type WithResponse } from '../transport/promise.ts';
import { redactUrl, scrub } from '../transport/redact.ts';
import type { Log } from '../transport/log.ts';
import { Transport, type RequestBody } from '../transport/transport.ts';
import { JobPage, toQueueState, type JobBackend, type JobRecord, type JobStatusResult, type QueueState } from './jobs.ts';
import { cloudProtocol } from './protocol/cloud.ts';
import { localProtocol } from './protocol/local.ts';
import { v2Protocol } from './protocol/v2.ts';
import { deleteFromQueue } from './protocol/routes.ts';
import { STOP_JOB_OPTIONS, type StopJobOptions } from './protocol/stop.ts';
import type { ServerKind, ServerProtocol } from './protocol/types.ts';
import { submitWithId } from './submission.ts';
import { withInputs } from './inputs.ts';
import { followSigned, isLoopback } from './signed.ts';
import { randomUuid } from './uuid.ts';
import { FOLLOW_OPTIONS, RUN_OPTIONS, WAIT_FOR_JOB_OPTIONS, type FollowOptions, type JobResult, type RunOptions, type WaitForJobOptions } from './run-options.ts';
import { rootErrors } from './root-errors.ts';
import { checkSocketOptions, CloudSocket, type CloudSocketOptions } from './socket.ts';
import type { FollowSocket } from './follow/follower.ts';
import { firstOf, isEditorFormat, type WorkflowIssue } from '../workflow/issue.ts';
import type { EditorOptions } from '../workflow/editor.ts';
import type { RegistryClient } from '../registry/client.ts';
import type { V2Backend, V2JobLogs, V2UploadResponse } from './v2/backend.ts';
import type { V2Asset } from './v2/wire.ts';

/** A Node `Readable` (typed structurally so browser users need no Node types). */
export interface NodeReadableLike {
  pipe: (...args: never[]) => unknown;
  read: (...args: never[]) => unknown;
  on: (...args: never[]) => unknown;
}

/** What `uploadImage` and `uploadMask` accept. A string is a file path (Node only). */
export type UploadInput = Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array> | NodeReadableLike | string;

/** Options of {@link CloudClient}. */
export interface CloudClientOptions extends ClientOptions {
  /** Cloud base URL (`https://…`; the WebSocket uses the same host). In Node, defaults to `PLATFORMUI_CLOUD_URL`. */
  baseUrl?: string;
  /** Account API key, or a function returning it. In Node, defaults to `PLATFORMUI_API_KEY`. Not needed by a local server. */
  apiKey?: Credential;
  /**
   * What `baseUrl` is. `'cloud'`: the cloud service; an API key is required.
   * `'local'`: a self-hosted server of the same protocol; no key needed, and
   * a running job is stopped with the atomic cancel where the server has it,
   * else `POST /interrupt { prompt_id }`.
   * `'v2'`: Comfy API v2 (`/api/v2/…`: Comfy Cloud's current API, a
   * serverless deployment, or `comfy-api-proxy` in front of a self-hosted
   * server): the same methods where v2 has the concept, submissions under an
   * `Idempotency-Key`, inputs as content-addressed assets, one event stream
   * per job; its code loads on first use. The key goes as
   * `Authorization: Bearer`; none is needed on a loopback host.
   * `'auto'` (default): `'local'` when no API key is configured and the host
   * is loopback (`localhost`, `127.x.x.x`, `[::1]`), else `'cloud'`; never
   * `'v2'`. A `keyless` client is always `'cloud'` (its relay may listen on
   * loopback).
   *
   * @example
   * ```ts
   * const cloud = new CloudClient({ baseUrl: 'https://cloud.comfy.org', apiKey, server: 'v2' });
   * ```
   */
  server?: 'auto' | 'cloud' | 'local' | 'v2';
  /**
   * Where `object_info` comes from for validation (`validate: true`,
   * {@link CloudClient.validateWorkflow}) and the editor's saved format:
   * the object itself, or the base URL of a server that serves
   * `GET /api/object_info` (the self-hosted server behind a v2 proxy, the
   * cloud's v1 route). Default: this client's own server. A v2 server has
   * none: without this option, an editor file or `validate: true` is refused
   * before any request, and API-format workflows run unvalidated.
   *
   * @example
   * ```ts
   * const v2 = new CloudClient({ baseUrl: 'http://127.0.0.1:8189', server: 'v2', objectInfo: 'http://127.0.0.1:8188' });
   * ```
   */
  objectInfo?: ObjectInfo | string;
  /**
   * Send no API key, not even from the environment: a backend of yours in
   * front of the cloud (a relay) adds it, so that the key never reaches, for
   * one, a web page. Always the cloud's protocol (never mistaken for a local
   * server because the relay listens on loopback), and the caller's own
   * `headers` (the relay's auth) go along unchanged. A local server needs no key anyway.
   *
   * @example
   * ```ts
   * const cloud = new CloudClient({ baseUrl: 'https://relay.example.com', server: 'cloud', keyless: true });
   * ```
   */
  keyless?: boolean;
}

/** The keys of {@link CloudClientOptions} (a pool's server entries take them too). */
export const CLOUD_CLIENT_OPTIONS = /* @__PURE__ */ joinKeys(CLIENT_OPTIONS, { apiKey: 1, server: 1, keyless: 1, objectInfo: 1 } as const) satisfies OptionKeys<CloudClientOptions>;

/** Options of {@link CloudClient.interrupt}. */
export interface InterruptOptions extends RequestOptions {
  /**
   * Stop only this prompt. A local server: `{ prompt_id }`, which stops that
   * prompt if it is the one running. The cloud's interrupt takes no body and
   * stops every running job of the account, so there this job is stopped
   * with {@link CloudClient.stopJob} instead: never another.
   */
  promptId?: string;
}

const INTERRUPT_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { promptId: 1 } as const) satisfies OptionKeys<InterruptOptions>;

/** Options of {@link CloudClient.uploadImage}. */
export interface UploadImageOptions extends RequestOptions {
  /** `input` (default) for images, `temp` for temporary files. */
  type?: 'input' | 'temp';
  /** Replace a file of the same name. Sent as the string `true`/`false`. */
  overwrite?: boolean;
  /** File name to send; defaults to the File's name, the path's base name, or `upload.bin`. */
  filename?: string;
}

const UPLOAD_IMAGE_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { type: 1, overwrite: 1, filename: 1 } as const) satisfies OptionKeys<UploadImageOptions>;

/** Options of {@link CloudClient.uploadMask}. */
export interface UploadMaskOptions extends RequestOptions {
  /** The image the mask belongs to. */
  originalRef: FileRef;
  /** File name to send. */
  filename?: string;
}

const UPLOAD_MASK_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { originalRef: 1, filename: 1 } as const) satisfies OptionKeys<UploadMaskOptions>;

/** Options of {@link CloudClient.submit}. */
export interface SubmitOptions extends RequestOptions {
  /**
   * Account key for partner nodes, sent as `extra_data.api_key_platform_org`.
   * `true` sends the client's own API key.
   */
  partnerApiKey?: string | true;
  /** Further `extra_data` members. */
  extraData?: Record<string, unknown>;
  /**
   * `client_id` for the submission body. The cloud ignores it; a local
   * counterpart server routes a job's events only to the socket with this id.
   */
  clientId?: string;
  /**
   * Check the workflow against this server's `object_info` first (fetched
   * once per client and cached; see {@link CloudClient.validateWorkflow}) and
   * throw {@link WorkflowValidationError} before anything is sent when it has
   * errors. Warnings do not stop the submission.
   */
  validate?: boolean;
  /**
   * The job's id, sent as `prompt_id`. Default: a random UUID chosen by the
   * SDK before the request, so that a job whose answer is lost can still be
   * named, looked up, followed and stopped. A server that does not honour
   * chosen ids answers with its own (then remembered per client).
   */
  promptId?: string;
  /**
   * When the answer to the submission is lost (timeout, reset, 5xx) and the
   * job cannot be found by its id within `confirmWithin`, send it once more
   * with the same id. Default false: reject with an `APIConnectionError`
   * whose `sent` is `'maybe'` and whose `promptId` names the job.
   */
  resubmitUnconfirmed?: boolean;
  /** How long (ms) to look a job up by its id after its submission's answer was lost. Default 15000; 0 looks nothing up. */
  confirmWithin?: number;
  /**
   * Once this aborts, nothing more is sent (the submission, or its second
   * send with `resubmitUnconfirmed`), but a request already out is left to
   * finish, unlike `signal`: its answer says whether a job was made. What
   * `run()` uses for its own `signal`.
   */
  stopBefore?: AbortSignal;
  /**
   * Awaited with the job's id immediately before each submission request
   * (`POST /api/prompt`) leaves: after `validate`, and in `run()` after the
   * wait for the socket (in a pool, after the inputs' uploads too). If it
   * throws or rejects, that request is not sent and the submission (the run)
   * rejects with its error: the last word of a caller whose right to send
   * may have lapsed meanwhile (a queue worker's lock on its job). With
   * `resubmitUnconfirmed` it is asked again before the second send; refusing
   * that one leaves the first's job as it was (it may exist, under this id).
   *
   * @example
   * ```ts
   * // Sent only by the process that still owns the order (`db` is yours).
   * await cloud.run(workflow, { beforeSubmit: async (id) => { if ((await db.ownerOf(orderId)) !== me) throw new Error(`${id}: taken over`); } });
   * ```
   */
  beforeSubmit?: (promptId: string) => void | Promise<void>;
  /**
   * For a workflow in the editor's saved format: what to do with a node
   * whose widget values do not fit its class on this server (see
   * {@link EditorOptions.widgetValues}). Default `'strict'`.
   */
  widgetValues?: EditorOptions['widgetValues'];
}

/** The keys of {@link SubmitOptions} (run() takes some of them). */
export const SUBMIT_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { partnerApiKey: 1, extraData: 1, clientId: 1, validate: 1, promptId: 1, resubmitUnconfirmed: 1, confirmWithin: 1, stopBefore: 1, beforeSubmit: 1, widgetValues: 1 } as const) satisfies OptionKeys<SubmitOptions>;

/**
 * A workflow as `submit`, `run` and `validateWorkflow` take it: API-format
 * JSON, anything that gives it from `toJSON()` (a `Workflow` builder), or a
 * workflow saved in the editor (`nodes` and `links`), converted with the
 * server's `object_info` as the editor converts it before it submits.
 */
export type WorkflowInput = Workflow | { toJSON(): Workflow } | EditorWorkflowJSON;

/** A workflow in the editor's saved format, as far as the clients tell it apart: `nodes` and `links` arrays. */
export interface EditorWorkflowJSON {
  nodes: unknown[];
  links: unknown[];
  [member: string]: unknown;
}

/** The API-format JSON of a workflow input (a node keyed `toJSON` is an object, never a function). */
export const jsonOf = (w: WorkflowInput): Workflow | EditorWorkflowJSON =>
  typeof w === 'object' && w !== null && typeof (w as { toJSON?: unknown }).toJSON === 'function' ? (w as { toJSON(): Workflow }).toJSON() : (w as Workflow);

/**
 * `extraData` with the saved workflow as the editor sends it
 * (`extra_pnginfo.workflow`), so that the outputs open in the editor as the
 * graph that was saved; the caller's own `extra_pnginfo` wins.
 */
export const withSavedWorkflow = (saved: object, extraData: Record<string, unknown> | undefined): Record<string, unknown> => ({ extra_pnginfo: { workflow: saved }, ...extraData });

/** Options of {@link CloudClient.validateWorkflow}. */
export interface ValidateWorkflowOptions extends RequestOptions {
  /** Fetch `object_info` again instead of using the cached one (after installing nodes or models). */
  refresh?: boolean;
  /**
   * A `RegistryClient`: each `unknown_class` issue then names the registry
   * pack that provides the class (`issue.pack`), found with
   * `registry.findMissingPacks` (no registry request when every class is known).
   */
  registry?: Pick<RegistryClient, 'findMissingPacks'>;
  /** For a workflow in the editor's saved format: see {@link SubmitOptions.widgetValues}. */
  widgetValues?: EditorOptions['widgetValues'];
}

const VALIDATE_WORKFLOW_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { refresh: 1, registry: 1, widgetValues: 1 } as const) satisfies OptionKeys<ValidateWorkflowOptions>;

const STATUS_OVER_SUBMISSION = new Set([401, 402, 403, 429]);
const SERVER_KINDS = new Set(['auto', 'cloud', 'local', 'v2']);

/** The kind of server the options name: `keyless` is the cloud behind a relay; `auto` is local for a loopback URL without a key. */
function serverKind(options: CloudClientOptions, baseUrl: string | undefined): ServerKind {
  const server = options.server ?? 'auto';
  if (server === 'v2') return 'v2';
  if (options.keyless || server === 'cloud') return 'cloud';
  if (server === 'local') return 'local';
  // The environment's key goes with the environment's URL: a key kept for the cloud
  // must not make an explicitly given loopback server "the cloud", nor be sent to it.
  const hasKey = options.apiKey !== undefined || (options.baseUrl === undefined && fromEnv('PLATFORMUI_API_KEY') !== undefined);
  const host = baseUrl && URL.canParse(baseUrl) ? new URL(baseUrl).hostname : '';
  return !hasKey && isLoopback(host) ? 'local' : 'cloud';
}

/**
 * Client of the cloud workflow service.
 *
 * @example
 * ```ts
 * const cloud = new CloudClient({ baseUrl: 'https://cloud.example.com', apiKey: process.env.PLATFORMUI_API_KEY });
 * const { name } = await cloud.uploadImage(new Blob([bytes], { type: 'image/png' }), { filename: 'in.png' });
 * const { prompt_id } = await cloud.submit(workflow);
 * ```
 */
export class CloudClient implements JobBackend {
  readonly #transport: Transport;
  /** `'cloud'`, `'local'` or `'v2'`: the kind of server this client talks to, decided once from the options (see {@link CloudClientOptions.server}). */
  readonly server: ServerKind;
  /** The server's base URL as errors and logs show it (credentials in it redacted). */
  readonly baseUrl: string;
  /** Everything that differs between the kinds of server, chosen once. */
  readonly #protocol: ServerProtocol;
  /** Comfy API v2's code, loaded on first use (only a `server: 'v2'` client has it). */
  readonly #v2: (() => Promise<V2Backend>) | undefined;
  /** Where `object_info` comes from when not from this server (the `objectInfo` option). */
  readonly #objectInfoSource: ObjectInfo | string | undefined;
  /** Whether this server uses the job ids it is sent; `undefined` until it has answered a submission. */
  readonly #honoursIds: { value: boolean | undefined } = { value: undefined };
  /** `object_info`, fetched once for {@link validateWorkflow}. */
  #objectInfo: Promise<ObjectInfo> | undefined;
  #socket: CloudSocket | undefined;
  /** Whether the socket was opened by run() alone (then it closes after the last run). */
  #closeWhenIdle = false;
  #runs = 0;

  constructor(options: CloudClientOptions = {}) {
    checkOptions(options, CLOUD_CLIENT_OPTIONS, 'CloudClient');
    const server = options.server ?? 'auto';
    if (!SERVER_KINDS.has(server)) throw new InvalidArgumentError("must be 'auto', 'cloud' or 'local'", 'server');
    if (options.keyless && options.apiKey !== undefined) throw new InvalidArgumentError('a keyless client takes no apiKey: the relay in front of the cloud adds it', 'apiKey');
    const url = options.baseUrl ?? fromEnv('PLATFORMUI_CLOUD_URL');
    this.server = serverKind(options, url);
    const v2 = this.server === 'v2';
    if (options.objectInfo !== undefined && (typeof options.objectInfo !== 'string' || !URL.canParse(options.objectInfo)) && (typeof options.objectInfo !== 'object' || options.objectInfo === null || Array.isArray(options.objectInfo))) {
      throw new InvalidArgumentError('must be an object_info object or the http(s) URL of a server that serves /api/object_info', 'objectInfo');
    }
    this.#objectInfoSource = options.objectInfo;
    this.#transport = new Transport({
      service: v2 ? 'v2' : 'cloud',
      options,
      baseUrlEnv: 'PLATFORMUI_CLOUD_URL',
      credential: options.keyless ? undefined : options.apiKey,
      credentialEnv: this.server === 'local' || options.keyless ? undefined : 'PLATFORMUI_API_KEY',
      authScheme: v2 ? 'bearer' : 'apiKey',
      credentialName: 'apiKey',
      // comfy-api-proxy takes no key by default and refuses a non-loopback bind without one.
      credentialOptional: this.server === 'local' || options.keyless === true || (v2 && url !== undefined && URL.canParse(url) && isLoopback(new URL(url).hostname)),
      credentialHint: server === 'cloud' ? '' : " (a self-hosted server needs none: use a loopback baseUrl or pass server: 'local')",
      // A keyless client's relay adds the key: a 401 there is the relay's own refusal.
      noCredentialHint:
        this.server === 'local' && !options.keyless
          ? `no API key was sent (${server === 'local' ? "server: 'local'" : 'a loopback baseUrl without apiKey is taken for a local server'}, and PLATFORMUI_API_KEY goes only with PLATFORMUI_CLOUD_URL): to send one, pass apiKey, and server: 'cloud' if this is the cloud`
          : undefined,
    });
    this.baseUrl = redactUrl(this.#transport.baseUrl);
    if (v2) {
      const protocol = v2Protocol(this.#transport);
      this.#protocol = protocol;
      this.#v2 = protocol.backend;
    } else this.#protocol = this.server === 'local' ? localProtocol(this.#transport) : cloudProtocol(this.#transport);
  }

  /** Throws {@link UnsupportedError} on a v2 server, before any request: `method` has no v2 equivalent. */
  #notOnV2(method: string, instead: string): void {
    if (this.server === 'v2') throw new UnsupportedError('v2', method, instead);
  }

  /** A Comfy API v2 method: `call` on the loaded backend; {@link UnsupportedError} on any other kind, before any request. */
  async #onV2<T>(method: string, call: (backend: V2Backend) => Promise<T>): Promise<T> {
    if (!this.#v2) throw new UnsupportedError(this.server, method, "it is Comfy API v2's (server: 'v2')");
    return call(await this.#v2());
  }

  /**
   * Where this client's lines go, as `logLevel` and `logger` (or `PLATFORMUI_LOG`)
   * made it: a function per enabled level. `run()` and the socket write to it.
   */
  get log(): Log {
    return this.#transport.log;
  }

  /**
   * `GET /api/object_info`: every node definition, keyed by class name.
   * Fetched on every call; the answer is also what {@link validateWorkflow}
   * (and `validate: true`) check against from then on.
   */
  getObjectInfo(options?: RequestOptions): APIPromise<ObjectInfo> {
    const answer = APIPromise.from(async () => {
      checkRequestOptions(options, 'getObjectInfo()');
      const source = this.#objectInfoSource;
      if (typeof source === 'object') return { data: source, response: new Response(null, { status: 200 }) };
      if (typeof source === 'string') {
        // Another server (the one behind a v2 proxy): nothing of this client goes there.
        const response = await this.#transport.fetchElsewhere(new URL('api/object_info', source.endsWith('/') ? source : `${source}/`), options);
        return { data: (await response.json()) as ObjectInfo, response };
      }
      this.#notOnV2('getObjectInfo()', 'pass the objectInfo option');
      return this.#transport.request<ObjectInfo>({ method: 'GET', path: 'api/object_info', auth: true, schema: rules.ObjectInfo, options });
    });
    answer.then((info) => void (this.#objectInfo = Promise.resolve(info)), () => undefined);
    return answer;
  }

  /**
   * Every mistake this server's `object_info` reveals in a workflow (see
   * {@link validateWorkflow}): errors the server would reject it for, and
   * warnings. `object_info` is fetched on the first call and kept; pass
   * `refresh: true` after installing nodes or models.
   *
   * @example
   * ```ts
   * const issues = await cloud.validateWorkflow(workflow);
   * for (const i of issues) console.log(i.severity, i.message);
   * // error #3 KSampler: sampler_name: must be one of "euler", …, got "eulr" (did you mean "euler"?)
   *
   * // Name the pack that provides each class the server lacks:
   * const named = await cloud.validateWorkflow(workflow, { registry: new RegistryClient() });
   * // error #12 TiledKSampler: this server has no node class "TiledKSampler": install the pack "pixelforge-tiled-diffusion" (0.6.4) from the registry
   * ```
   */
  async validateWorkflow(workflow: WorkflowInput, options: ValidateWorkflowOptions = {}): Promise<WorkflowIssue[]> {
    checkOptions(options, VALIDATE_WORKFLOW_OPTIONS, 'validateWorkflow()');
    const { refresh, registry, widgetValues, ...request } = options;
    // The one option read here that the submission's rules also check: the same words, before object_info is fetched.
    checkArgs(rules.SubmitOptionsParams, { widgetValues }, 'options');
    const json = jsonOf(workflow);
    const objectInfo = await this.#cachedObjectInfo(request, refresh);
    const packs = registry && (await registry.findMissingPacks(json as Workflow, { objectInfo, ...(request.signal ? { signal: request.signal } : {}) }));
    const { validateWorkflow } = await validator();
    if (!isEditorFormat(json)) return validateWorkflow(json, objectInfo, packs ? { packs } : {});
    // The editor's format: what stops its conversion, else what it changed and what the server would refuse.
    const { workflow: prompt, issues } = (await editor()).convertEditorWorkflow(json, objectInfo, { ...(packs ? { packs } : {}), ...(widgetValues ? { widgetValues } : {}) });
    return issues.some((i) => i.severity === 'error') ? issues : [...issues, ...validateWorkflow(prompt, objectInfo, packs ? { packs } : {})];
  }

  /** `object_info`, fetched on first use (or with `refresh`) and kept; a failed fetch is not kept. */
  #cachedObjectInfo(request: RequestOptions, refresh?: boolean): Promise<ObjectInfo> {
    // v2 serves none: the chunk says what to pass instead, before any request.
    if (this.#v2 && this.#objectInfoSource === undefined) return this.#v2().then((b) => Promise.reject(b.noObjectInfo()));
    if (refresh || !this.#objectInfo) {
      const fetching = Promise.resolve(this.getObjectInfo(request));
      this.#objectInfo = fetching;
      fetching.catch(() => {
        if (this.#objectInfo === fetching) this.#objectInfo = undefined;
      });
    }
    return this.#objectInfo!;
  }

  /**
   * The API-format prompt of a workflow input. The editor's saved format is
   * converted with this server's `object_info` (the converter loads on first
   * use: an app that never passes one never downloads it), and `extraData`
   * then carries the saved workflow, as the editor sends it.
   */
  async #prompt(workflow: WorkflowInput, options: SubmitOptions): Promise<{ prompt: Workflow; extraData?: Record<string, unknown> }> {
    const json = jsonOf(workflow);
    if (!isEditorFormat(json)) return { prompt: json };
    const info = await this.#cachedObjectInfo(requestOptionsOf(options));
    const { workflow: prompt, issues } = (await editor()).convertEditorWorkflow(json, info, options.widgetValues ? { widgetValues: options.widgetValues } : {});
    const errors = issues.filter((i) => i.severity === 'error');
    if (errors.length > 0) throw new InvalidArgumentError(firstOf(errors), 'workflow', errors);
    for (const w of issues) this.log.warn?.(w.message, { nodeId: w.nodeId, code: w.code });
    // v2 takes no extra_pnginfo (the real server refuses unknown extra_data keys).
    return { prompt, ...(this.server === 'v2' ? (options.extraData ? { extraData: options.extraData } : {}) : { extraData: withSavedWorkflow(json, options.extraData) }) };
  }

  /**
   * `POST /api/upload/image`. Blobs, files (a path, in Node) and streams are
   * streamed, never read whole into memory.
   *
   * @example
   * ```ts
   * const ref = await cloud.uploadImage('./photo.png');              // Node: a path
   * const ref2 = await cloud.uploadImage(fileInput.files[0]);        // browser: a File
   * const ref3 = await cloud.uploadImage(fs.createReadStream(p), { filename: 'p.png' });
   * ```
   */
  uploadImage(file: UploadInput, options: UploadImageOptions = {}): APIPromise<UploadResponse> {
    if (this.#v2) return this.#uploadV2(file, options);
    return this.#upload('api/upload/image', file, options, () => {
      checkOptions(options, UPLOAD_IMAGE_OPTIONS, 'uploadImage()');
      const type = options.type ?? 'input';
      if (type !== 'input' && type !== 'temp') throw new InvalidArgumentError("must be 'input' or 'temp'", 'type');
      if (options.overwrite !== undefined && typeof options.overwrite !== 'boolean') throw new InvalidArgumentError('must be a boolean', 'overwrite');
      const fields: Record<string, string> = { type };
      if (options.overwrite !== undefined) fields.overwrite = String(options.overwrite);
      return fields;
    });
  }

  /** v2: the file as a content-addressed asset (`V2Backend.upload`). */
  #uploadV2(file: UploadInput, options: UploadImageOptions): APIPromise<V2UploadResponse> {
    return APIPromise.from(async () => (checkOptions(options, UPLOAD_IMAGE_OPTIONS, 'uploadImage()'), (await this.#v2!()).upload(file, options)));
  }

  /**
   * Comfy API v2: {@link uploadImage} with v2's answer typed: the asset, the
   * `core/ASSET` reference a workflow input takes, and `bytesSent` (0 when the
   * server had the bytes: nothing of the file was sent). The file is hashed
   * here (BLAKE3, streamed) and sent only when the server lacks it.
   *
   * @example
   * ```ts
   * const { reference, bytesSent } = await v2.uploadAsset('./photo.png');
   * workflow['10'].inputs.image = reference;
   * ```
   */
  uploadAsset(file: UploadInput, options: Omit<UploadImageOptions, 'type' | 'overwrite'> = {}): APIPromise<V2UploadResponse> {
    return APIPromise.from(() => this.#onV2('uploadAsset()', async (b) => (checkOptions(options, UPLOAD_IMAGE_OPTIONS, 'uploadAsset()'), b.upload(file, options))));
  }

  /**
   * Comfy API v2: an asset (`GET /api/v2/assets/{id}`), with a fresh `url`.
   *
   * @example
   * ```ts
   * const { reference } = await v2.uploadImage('./photo.png');
   * const asset = await v2.getAsset(reference.info.id);
   * ```
   */
  getAsset(assetId: string, options?: RequestOptions): APIPromise<V2Asset> {
    return APIPromise.from(() => this.#onV2('getAsset()', (b) => b.getAsset(checkId(assetId, 'assetId'), (checkRequestOptions(options, 'getAsset()'), options))));
  }

  /**
   * Comfy API v2: deletes an asset's record (`DELETE /api/v2/assets/{id}`;
   * bytes another record shares stay). {@link NotFoundError} when it is gone
   * already; {@link ConflictError} (`code` `asset_in_use`) while a job holds it.
   *
   * @example
   * ```ts
   * await v2.deleteAsset(upload.asset.id);
   * ```
   */
  deleteAsset(assetId: string, options?: RequestOptions): Promise<void> {
    return this.#onV2('deleteAsset()', (b) => b.deleteAsset(checkId(assetId, 'assetId'), (checkRequestOptions(options, 'deleteAsset()'), options)));
  }

  /**
   * `POST /api/upload/mask`: a mask for an uploaded image, sent with
   * `type=input` and the JSON-encoded `original_ref`.
   */
  uploadMask(file: UploadInput, options: UploadMaskOptions): APIPromise<UploadResponse> {
    return this.#upload('api/upload/mask', file, options ?? {}, () => {
      checkOptions(options, UPLOAD_MASK_OPTIONS, 'uploadMask()');
      this.#notOnV2('uploadMask()', 'upload the mask with uploadImage() for a LoadImageMask node');
      const ref = checkArgs(rules.FileRef, options?.originalRef, 'originalRef');
      return { type: 'input', subfolder: ref.subfolder ?? '', original_ref: JSON.stringify(ref) };
    });
  }

  /**
   * `POST /api/prompt`: submits a workflow as a job whose id is chosen before
   * the request (`promptId`, default a random UUID, sent as `prompt_id`). A
   * response carrying `error` throws {@link SubmissionError}, whatever its
   * HTTP status. Never sent twice on its own, whatever `retry` says: when the
   * answer is lost (a timeout, a reset, a 5xx after sending), the job is
   * looked up by its id for `confirmWithin` ms (default 15 s). Found: this
   * resolves as if the answer had come. Not found: it rejects with an
   * {@link APIConnectionError} whose `promptId` names the job and whose
   * `sent` is `'maybe'` (it may exist: follow it, stop it, or ask again with
   * `resubmitUnconfirmed`); `sent: 'no'` when the request provably never
   * left (refused, DNS, no route). A server that does not use the ids it is
   * sent (it answers with its own) is remembered per client; there a lost
   * answer cannot be looked up, and the error names no job.
   *
   * @example
   * ```ts
   * const { prompt_id } = await cloud.submit(workflow, { partnerApiKey: true });
   * // Your own id, e.g. to record it before sending:
   * await cloud.submit(workflow, { promptId: crypto.randomUUID() });
   * ```
   */
  submit(workflow: WorkflowInput, options: SubmitOptions = {}): APIPromise<SubmissionResponse & { prompt_id: string }> {
    return APIPromise.from(async () => {
      checkOptions(options, SUBMIT_OPTIONS, 'submit()');
      checkArgs(rules.SubmitOptionsParams, options, 'options');
      checkFunction(options.beforeSubmit, 'beforeSubmit');
      const converted = await this.#prompt(workflow, options);
      const prompt = checkArgs(rules.Workflow, converted.prompt, 'workflow');
      if (Object.keys(prompt).length === 0) throw new InvalidArgumentError('has no nodes', 'workflow');
      const id = options.promptId ?? randomUuid();
      if (options.validate) {
        // object_info is fetched with the submission's request options.
        const issues = await this.validateWorkflow(prompt, requestOptionsOf(options));
        if (issues.some((i) => i.severity === 'error')) throw new WorkflowValidationError(issues);
      }
      const extra: Record<string, unknown> = { ...(converted.extraData ?? options.extraData) };
      if (options.partnerApiKey !== undefined) {
        // v2 names the partner key `api_key_comfy_org`.
        const name = this.server === 'v2' ? 'api_key_comfy_org' : 'api_key_platform_org';
        extra[name] = options.partnerApiKey === true ? await this.#transport.credential() : options.partnerApiKey;
        this.#transport.rememberSecret(extra[name] as string);
      }
      // v2: `promptId` is the Idempotency-Key; the answer's `prompt_id` is the server's job id.
      if (this.#v2) return (await this.#v2()).submitWorkflow(prompt, extra, id, options);
      const body: Record<string, unknown> = { prompt };
      if (Object.keys(extra).length) body.extra_data = extra;
      if (options.clientId) body.client_id = options.clientId;
      const t = this.#transport;
      let r: WithResponse<SubmissionResponse>;
      try {
        r = await submitWithId(
          {
            send: (json) => t.request<SubmissionResponse>({ method: 'POST', path: 'api/prompt', json, auth: true, schema: rules.SubmissionResponse, options, paid: true }),
            lookup: (promptId, timeout) => this.#protocol.status(promptId, { headers: options.headers, signal: options.signal, timeout: Math.min(timeout, 10_000), retry: { limit: 0 } }),
            log: t.log,
            honoursIds: this.#honoursIds,
          },
          body,
          id,
          options,
        );
      } catch (err) {
        // A rejected workflow (400 and kin) is a SubmissionError; credentials,
        // credits, subscription and server failures keep their own classes.
        const b = err instanceof APIError && !STATUS_OVER_SUBMISSION.has(err.status) && err.status < 500 ? err.body : undefined;
        if (b !== null && typeof b === 'object' && 'error' in b) throw new SubmissionError((err as APIError).status, b as Record<string, unknown>, id);
        throw err;
      }
      if (r.data?.error != null || typeof r.data?.prompt_id !== 'string') {
        // A 2xx body is not scrubbed by the transport; this one becomes an error, so scrub it here.
        throw new SubmissionError(r.response.status, scrub(r.data ?? { error: 'no prompt_id in the response' }, t.secrets) as Record<string, unknown>, id);
      }
      return r as WithResponse<SubmissionResponse & { prompt_id: string }>;
    });
  }

  /**
   * The job's status with its normalized {@link JobPhase} (`phase`), `status`
   * kept raw. `GET /api/job/{id}/status` answers the live cloud's raw states
   * (`queued_limited`, `executing`, `success`, `lost`, …) or the seed's five
   * values. Where that endpoint does not exist (a local server), the job
   * record answers instead: {@link getJob}.
   *
   * @example
   * ```ts
   * const { status, phase } = await cloud.getJobStatus(promptId);
   * if (phase === 'failed') console.log('ended with', status); // 'error', 'non_retryable_error' or 'lost'
   * ```
   */
  getJobStatus(promptId: string, options?: RequestOptions): APIPromise<JobStatusResult> {
    return APIPromise.from(() => (checkRequestOptions(options, 'getJobStatus()'), this.#protocol.status(checkId(promptId, 'promptId'), options)));
  }

  /**
   * The job record, outputs included: `GET /api/jobs/{id}` (status mapped to
   * `pending | in_progress | completed | failed | cancelled`, `outputs`,
   * `execution_error`, `workflow`, times), with `phase` added. On a local
   * server without the jobs API, built from `/history/{id}` and `/queue`.
   * Throws {@link NotFoundError} for a job the server does not know.
   *
   * @example
   * ```ts
   * const job = await cloud.getJob(promptId);
   * if (job.phase === 'failed') console.log(job.execution_error?.exception_message);
   * ```
   */
  getJob(promptId: string, options?: RequestOptions): APIPromise<JobRecord> {
    return APIPromise.from(() => (checkRequestOptions(options, 'getJob()'), this.#protocol.record(checkId(promptId, 'promptId'), options)));
  }

  /**
   * `GET /api/jobs`: the account's jobs, newest first by default. Awaiting
   * gives one {@link JobPage}; `for await` gives every job, later pages
   * fetched by offset as the loop asks for them. Parameters are checked
   * against what this client's kind of server takes, before the request
   * ({@link InvalidArgumentError} naming the field and the allowed values):
   * `status` one of `pending`, `in_progress`, `completed`, `failed`,
   * `cancelled` or a list of them; `limit` 1–1000; `offset` ≥ 0;
   * `sort_order` `asc` or `desc`. The cloud sorts by `create_time` or
   * `execution_time` and filters by `output_type`; a local server sorts by
   * `created_at` or `execution_duration`, and has neither `cancelled` nor
   * `output_type`.
   *
   * @example
   * ```ts
   * const page = await cloud.listJobs({ status: ['failed', 'cancelled'], limit: 20 });
   * for await (const job of cloud.listJobs({ output_type: 'video' })) console.log(job.id, job.status);
   * ```
   */
  listJobs(params: ListJobsParams = {}, options?: RequestOptions): PagePromise<JobPage> {
    return new PagePromise(async () => {
      const p = checkArgs(this.#protocol.listJobsParams, params, 'params');
      checkRequestOptions(options, 'listJobs()');
      if (this.#v2) return (await this.#v2()).listPage(params, options);
      const query = { ...p, status: Array.isArray(p.status) ? p.status.join(',') : p.status };
      const fetchPage = (offset: number) =>
        this.#transport.request<JobList>({ method: 'GET', path: 'api/jobs', query: offset === (p.offset ?? 0) ? query : { ...query, offset }, auth: true, schema: rules.JobList, options });
      const r = await fetchPage(p.offset ?? 0);
      return { data: new JobPage(r, fetchPage, options?.signal), response: r.response };
    });
  }

  /**
   * Comfy API v2: the workflow a job ran (`GET /api/v2/jobs/{id}/workflow`),
   * `format` `api` for v2 submissions (assets already resolved to file names
   * on comfy-api-proxy).
   *
   * @example
   * ```ts
   * const { workflow } = await v2.getJobWorkflow(promptId);
   * ```
   */
  getJobWorkflow(promptId: string, options?: RequestOptions): APIPromise<{ workflow: Record<string, unknown>; format: string; [member: string]: unknown }> {
    return APIPromise.from(() => this.#onV2('getJobWorkflow()', (b) => b.workflow(checkId(promptId, 'promptId'), (checkRequestOptions(options, 'getJobWorkflow()'), options))));
  }

  /**
   * Comfy API v2: a job's logs (`GET /api/v2/jobs/{id}/logs`), `undefined`
   * when there are none (a 204, or a server without the route).
   *
   * @example
   * ```ts
   * const logs = await v2.getJobLogs(promptId);
   * if (logs) console.log(logs.text);
   * ```
   */
  getJobLogs(promptId: string, options?: RequestOptions): Promise<V2JobLogs | undefined> {
    return this.#onV2('getJobLogs()', (b) => b.logs(checkId(promptId, 'promptId'), (checkRequestOptions(options, 'getJobLogs()'), options)));
  }

  /**
   * `GET /api/queue`, each entry normalized ({@link QueueItem}: `number`,
   * `promptId`, `workflow`, `outputNodeIds`, `createTime`, and the tuple as
   * sent in `raw`). The cloud and a local server send different tuples.
   */
  getQueue(options?: RequestOptions): APIPromise<QueueState> {
    return APIPromise.from(async () => {
      checkRequestOptions(options, 'getQueue()');
      this.#notOnV2('getQueue()', "read a job's queue_position with getJob(id)");
      const r = await this.#transport.request<Queue>({ method: 'GET', path: 'api/queue', auth: true, schema: rules.Queue, options });
      return { data: toQueueState(r.data), response: r.response };
    });
  }

  /**
   * `POST /api/queue` with `delete`: cancels the listed jobs, and no other.
   * The cloud cancels pending and running jobs; a local server removes only
   * pending ones (to stop one job wherever it is, use {@link stopJob}).
   */
  cancel(promptIds: string | string[], options?: RequestOptions): APIPromise<unknown> {
    return APIPromise.from(() => {
      const ids = checkArgs(rules.PromptIds, typeof promptIds === 'string' ? [promptIds] : promptIds, 'promptIds');
      checkRequestOptions(options, 'cancel()');
      this.#notOnV2('cancel()', 'stop each job with stopJob(id)');
      return deleteFromQueue(this.#transport, ids, options);
    });
  }

  /**
   * `POST /api/interrupt`. Without `promptId`: on the cloud, no body, and it
   * interrupts every running job of the account; on a local server, whatever
   * runs. With `promptId`: only that job, never another (a local server gets
   * `{ prompt_id }`; on the cloud, whose interrupt takes no body, the job is
   * stopped with {@link stopJob}).
   */
  interrupt(options: InterruptOptions = {}): APIPromise<unknown> {
    return APIPromise.from(async () => {
      checkOptions(options, INTERRUPT_OPTIONS, 'interrupt()');
      const { promptId, ...request } = options;
      const id = promptId === undefined ? undefined : checkId(promptId, 'promptId');
      if (id === undefined) this.#notOnV2('interrupt()', 'stop each job with stopJob(id)');
      const json = this.#protocol.interruptBody(id);
      if (id !== undefined && json === undefined) return { data: undefined, response: await this.#protocol.stopJob(id, request) };
      return this.#transport.request({ method: 'POST', path: 'api/interrupt', auth: true, ...(json ? { json } : {}), options: request });
    });
  }

  /**
   * Stops one job, pending or running, and never another: what aborting
   * `run()` does. Resolves once the job is stopped. Where the server has it,
   * the atomic `POST /api/jobs/{id}/cancel` (a finished or unknown job:
   * nothing to do); else, on the cloud, `POST /api/queue { delete }` (both
   * one request, whose answer says the job is stopped). On a local server
   * without the atomic cancel, whose queue delete leaves a running job alone
   * and whose interrupt skips a pending one, in an order that cannot miss:
   * the delete, then a look at the job, `POST /interrupt { prompt_id }` while
   * it runs, and looks until it is seen ended or gone; a
   * {@link JobNotStoppedError} when it is not within `confirmWithin` ms
   * (default 10000). Never an interrupt without the job's id.
   *
   * @example
   * ```ts
   * await cloud.stopJob(promptId);
   * try { await local.stopJob(promptId, { confirmWithin: 5000 }); }
   * catch (err) { if (err instanceof JobNotStoppedError) console.log(`job ${err.promptId} may still run`); }
   * ```
   */
  async stopJob(promptId: string, options?: StopJobOptions): Promise<void> {
    const id = checkId(promptId, 'promptId');
    checkOptions(options, STOP_JOB_OPTIONS, 'stopJob()');
    checkInterval(options?.confirmWithin, 'confirmWithin');
    await this.#protocol.stopJob(id, options);
  }

  /**
   * Downloads an output. `GET /api/view` answers with a redirect to a signed
   * URL; the SDK reads the `location` itself and fetches it with no API key
   * and no other credential (fetch would forward `X-API-Key` to it). Returns
   * the signed URL's `Response`, whose body streams.
   *
   * Throws {@link DownloadError} when the redirect has no `location`, points
   * to plain http on a host other than loopback, or is opaque (browsers hide
   * manual redirects).
   *
   * @example
   * ```ts
   * const res = await cloud.download({ filename: 'out_00001_.png', subfolder: '', type: 'output' });
   * const blob = await res.blob();
   * ```
   */
  async download(fileRef: FileRef, options: RequestOptions = {}): Promise<Response> {
    const ref = checkArgs(rules.FileRef, fileRef, 'fileRef');
    checkRequestOptions(options, 'download()');
    // v2: the output's asset (its id or url), kept on the file reference by run() and getJob().
    if (this.#v2) return (await this.#v2()).download(fileRef as FileRef & { id?: unknown; url?: unknown }, options);
    const query = { filename: ref.filename, subfolder: ref.subfolder ?? '', type: ref.type ?? 'output' };
    const res = await this.#transport.send({ method: 'GET', path: 'api/view', query, auth: true, redirect: 'manual', options });
    // A local counterpart server answers 200 with the file itself, from its own origin.
    return followSigned(this.#transport, res, '/api/view', new URL(`${this.#transport.baseUrl}/api/view`), options);
  }

  /**
   * Node only: downloads a file reference to `destination`, streaming.
   * Resolves with the number of bytes written.
   */
  async downloadToFile(fileRef: FileRef, destination: string, options?: RequestOptions): Promise<number> {
    checkId(destination, 'destination');
    checkRequestOptions(options, 'downloadToFile()');
    const res = await this.download(fileRef, options);
    if (!res.body) return 0;
    return platform.saveToFile(res.body, destination);
  }

  /**
   * The client's WebSocket: one socket serves every job of the client. Opens
   * it on first call (later calls return the same socket while it is open;
   * `options` apply when a socket is created).
   *
   * @example
   * ```ts
   * const socket = cloud.connect();
   * socket.on('status', (m) => console.log('queue', m.data.status?.exec_info?.queue_remaining));
   * ```
   */
  connect(options?: CloudSocketOptions): CloudSocket {
    this.#notOnV2('connect()', "follow each job's own stream with run() or follow()");
    checkSocketOptions(options);
    this.#closeWhenIdle = false; // asked for: stays open until close()
    return this.#openSocket(options);
  }

  #openSocket(options?: CloudSocketOptions): CloudSocket {
    if (this.#socket && this.#socket.state !== 'closed') return this.#socket;
    const transport = this.#transport;
    return (this.#socket = new CloudSocket({ baseUrl: transport.baseUrl, credential: () => transport.optionalCredential(), hasCredential: transport.hasCredential, log: transport.log }, options));
  }

  /** Closes the client's socket, if any. Running `run()` calls fall back to polling. */
  close(): void {
    this.#socket?.close();
    this.#socket = undefined;
  }

  /**
   * Submits a workflow and follows it to the end over the shared socket,
   * polling the job status whenever the socket is down. Resolves with the
   * outputs on `execution_success` (or status `completed`); rejects with
   * {@link ExecutionError} on `execution_error` / `failed`, with
   * {@link JobCancelledError} on `execution_interrupted` / `cancelled`.
   * Aborting `signal` cancels this job only.
   *
   * @example
   * ```ts
   * const result = await cloud.run(workflow, {
   *   onProgress: ({ value, max }) => console.log(`${value}/${max}`),
   *   onPreview: (frame) => fs.writeFileSync('preview.jpg', frame.image),
   *   timeout: 120_000,
   * });
   * for (const file of result.files) await cloud.downloadToFile(file, file.filename);
   * // onSubmitted: the id as soon as the job exists (to record it, or follow() it later).
   * ```
   */
  async run(workflow: WorkflowInput, options: RunOptions = {}): Promise<JobResult> {
    checkOptions(options, RUN_OPTIONS, 'run()');
    checkFollowOptions(options);
    // Before the conversion fetches object_info: submit() checks them too, but only after that request.
    checkArgs(rules.SubmitOptionsParams, options, 'options');
    checkFunction(options.beforeSubmit, 'beforeSubmit');
    // Converted here, not in submit(): the job's log lines count the nodes the server gets.
    const converted = await this.#prompt(workflow, options);
    const { extraData } = converted;
    // Uploaded here, where the inputs option ends: the follower submits a workflow that names them.
    const { inputs, ...rest } = options;
    const prompt = inputs === undefined ? converted.prompt : await withInputs(converted.prompt, inputs, (file) => this.uploadImage(file, options.signal ? { signal: options.signal } : {}));
    const opts = extraData ? { ...rest, extraData } : rest;
    if (this.#v2) {
      // The key the job is submitted under, chosen now: the follower waits under it until the server names the job.
      const key = options.promptId ?? randomUuid();
      return this.#withJobStream(options, key, async (stream) => (await realtime()).runJob(this, stream, prompt, { ...opts, promptId: key }));
    }
    return this.#withSocket(options, async (socket) => (await realtime()).runJob(this, socket, prompt, opts));
  }

  /**
   * Follows a job that already exists (submitted earlier, by this process or
   * another) to its end: the same events, polling and result as {@link run}.
   * Aborting stops following; the job keeps running unless `stopOnAbort: true`.
   *
   * @example
   * ```ts
   * const { prompt_id } = await cloud.submit(workflow);
   * saveSomewhere(prompt_id);
   * // …later, maybe in another process:
   * const result = await cloud.follow(prompt_id, { onProgress: ({ value, max }) => console.log(value, max) });
   * ```
   */
  async follow(promptId: string, options: FollowOptions = {}): Promise<JobResult> {
    checkOptions(options, FOLLOW_OPTIONS, 'follow()');
    const id = checkId(promptId, 'promptId');
    // v2: a key names its job too (a queue records the key before the request); followed under the job's own id.
    if (this.#v2) {
      const jobId = (await this.#protocol.status(id, options.signal ? { signal: options.signal } : {})).data.id ?? id;
      return this.#withJobStream(options, undefined, async (stream) => (await realtime()).followJob(this, stream, jobId, options));
    }
    return this.#withSocket(options, async (socket) => (await realtime()).followJob(this, socket, id, options));
  }

  /** v2: the job's own event stream (`v2/stream.ts`), closed when the run ends. */
  async #withJobStream(options: FollowOptions, defer: string | undefined, task: (stream: FollowSocket) => Promise<JobResult>): Promise<JobResult> {
    checkFollowOptions(options);
    const stream = (await this.#v2!()).events(defer);
    try {
      return await task(stream);
    } finally {
      stream.close();
    }
  }

  /** Runs `task` on the shared socket, checking the timing options first; a socket opened only for runs closes after the last. */
  async #withSocket(options: FollowOptions, task: (socket: CloudSocket) => Promise<JobResult>): Promise<JobResult> {
    checkFollowOptions(options);
    // A socket that run() opened by itself closes after the last run, so a script
    // that never calls connect() or close() can still exit.
    if (!this.#socket || this.#socket.state === 'closed') this.#closeWhenIdle = true;
    const socket = this.#openSocket();
    this.#runs++;
    try {
      return await task(socket);
    } finally {
      if (--this.#runs === 0 && this.#closeWhenIdle) this.close();
    }
  }

  /**
   * Polls the job until it ends (every terminal state of the cloud, the seed
   * and a local server). Resolves with the job record, outputs included
   * (read again, briefly, while a completed job's outputs are not persisted
   * yet); rejects with {@link ExecutionError} when it failed (`error`,
   * `non_retryable_error`, `lost`) and {@link JobCancelledError} when cancelled.
   *
   * @example
   * ```ts
   * const { prompt_id } = await cloud.submit(workflow);
   * const job = await cloud.waitForJob(prompt_id, { pollInterval: 2000 });
   * for (const file of filesOf(job.outputs ?? {})) await cloud.downloadToFile(file, file.filename);
   * ```
   */
  waitForJob(promptId: string, options?: WaitForJobOptions): Promise<JobRecord> {
    try {
      checkOptions(options, WAIT_FOR_JOB_OPTIONS, 'waitForJob()');
    } catch (err) {
      return Promise.reject(err);
    }
    return realtime().then((r) => r.waitForJob(this, promptId, options));
  }

  #upload(p: string, file: UploadInput, options: UploadImageOptions | Partial<UploadMaskOptions>, fields: () => Record<string, string>): APIPromise<UploadResponse> {
    return APIPromise.from(async () => {
      const { body, headers } = await multipart(file, fields(), options.filename);
      return this.#transport.request<UploadResponse>({ method: 'POST', path: p, body, headers, auth: true, schema: rules.UploadResponse, options, fetch: platform.uploadFetch });
    });
  }
}

/** The timing options of `run()` and `follow()`, checked before any request. */
function checkFollowOptions(options: FollowOptions): void {
  checkTimeout(options.timeout, 'timeout');
  checkInterval(options.pollInterval, 'pollInterval');
  if (options.serverLostAfter !== Infinity) checkInterval(options.serverLostAfter, 'serverLostAfter', ' or Infinity');
  checkInterval(options.stopWithin, 'stopWithin');
}

/**
 * Following a job (`run.ts`: the follower, its states, records), loaded on the
 * first `run()`, `follow()` or `waitForJob()`: a client that only makes REST
 * calls never loads it (a file of its own in the browser build, which takes
 * the root's error classes from here: `root-errors.ts`).
 */
let following: Promise<typeof import('./run.ts')> | undefined;
const realtime = () =>
  (following ??= import('./run.ts').then((m) => {
    m.adoptErrors(rootErrors());
    return m;
  }));

/**
 * The workflow validator, loaded on the first `validateWorkflow()` (and so on the first `submit()` or `run()` with
 * `validate: true`): a file of its own in the browser build, which takes the root's error classes from here.
 */
let validating: Promise<typeof import('../workflow/validate.ts')> | undefined;
const validator = () =>
  (validating ??= import('../workflow/validate.ts').then((m) => {
    m.adoptErrors(rootErrors());
    return m;
  }));

/** The editor-format converter, loaded on first use (a chunk of its own in a browser app). */
const editor = () => import('../workflow/editor.ts');

async function multipart(file: UploadInput, fields: Record<string, string>, filename?: string): Promise<{ body: RequestBody; headers: Record<string, string> }> {
  if (typeof file === 'string') {
    const blob = await platform.fileBlob(file);
    return formData(fields, blob, filename ?? file.split(/[\\/]/).pop() ?? 'upload.bin');
  }
  if (file instanceof Blob) return formData(fields, file, filename ?? (file as File).name ?? 'upload.bin');
  if (file instanceof Uint8Array || file instanceof ArrayBuffer) return formData(fields, new Blob([file as BlobPart]), filename ?? 'upload.bin');
  if (file instanceof ReadableStream || platform.isNodeReadable(file)) return platform.streamMultipart(fields, 'image', file, filename ?? 'upload.bin');
  throw new InvalidArgumentError('must be a Blob, File, Uint8Array, ArrayBuffer, ReadableStream, Node Readable or (Node) a file path', 'file');
}

function formData(fields: Record<string, string>, blob: Blob, filename: string) {
  const form = new FormData();
  form.append('image', blob, filename || 'upload.bin');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return { body: form, headers: {} };
}
