/**
 * What `CloudClient`'s methods take: the client's options, each method's
 * options with their keys (checked before any request), and a workflow input
 * as the methods accept it.
 *
 * @module
 */
import { joinKeys, type OptionKeys } from '../args.ts';
import type { FileRef, ObjectInfo, Workflow } from '../schemas/cloud.ts';
import { CLIENT_OPTIONS, REQUEST_OPTIONS, type ClientOptions, type Credential, type RequestOptions } from '../transport/options.ts';
import type { EditorOptions } from '../workflow/editor.ts';
import type { RegistryClient } from '../registry/client.ts';
import type { CloudClient } from './client.ts';
import type { WorkflowValidationError } from '../workflow/errors.ts';

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

/** The keys of the options above. */
export const INTERRUPT_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { promptId: 1 } as const) satisfies OptionKeys<InterruptOptions>;

/** Options of {@link CloudClient.uploadImage}. */
export interface UploadImageOptions extends RequestOptions {
  /** `input` (default) for images, `temp` for temporary files. */
  type?: 'input' | 'temp';
  /** Replace a file of the same name. Sent as the string `true`/`false`. */
  overwrite?: boolean;
  /** File name to send; defaults to the File's name, the path's base name, or `upload.bin`. */
  filename?: string;
}

/** The keys of the options above. */
export const UPLOAD_IMAGE_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { type: 1, overwrite: 1, filename: 1 } as const) satisfies OptionKeys<UploadImageOptions>;

/** Options of {@link CloudClient.uploadMask}. */
export interface UploadMaskOptions extends RequestOptions {
  /** The image the mask belongs to. */
  originalRef: FileRef;
  /** File name to send. */
  filename?: string;
}

/** The keys of the options above. */
export const UPLOAD_MASK_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { originalRef: 1, filename: 1 } as const) satisfies OptionKeys<UploadMaskOptions>;

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

/** The keys of the options above. */
export const VALIDATE_WORKFLOW_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { refresh: 1, registry: 1, widgetValues: 1 } as const) satisfies OptionKeys<ValidateWorkflowOptions>;

