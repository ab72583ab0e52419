/**
 * `ProxyClient`: the partner proxy's AI image jobs (`registry-and-proxy.md`,
 * endpoints 6–7).
 *
 * @module
 */
import { checkArgs, checkId, checkOptions, joinKeys, type OptionKeys } from '../args.ts';
import { toBase64 } from '../base64.ts';
import { InvalidArgumentError, NotFoundError, ResponseValidationError } from '../errors.ts';
import { TaskNotFoundError } from './errors.ts';
import { platform } from '../platform/node.ts';
import type { RelightParams, SkinEnhancerCreativeParams, Task, TaskRecord } from '../schemas/proxy.ts';
import * as rules from '../schemas/rules.generated.ts';
import { isObject } from '../schemas/rule.ts';
import { checkRequestOptions, CLIENT_OPTIONS, REQUEST_OPTIONS, type ClientOptions, type Credential, type RequestOptions } from '../transport/options.ts';
import { APIPromise, type WithResponse } from '../transport/promise.ts';
import { scrub } from '../transport/redact.ts';
import { BEARER_SERVICE, Transport, path, type Query, type RequestBody } from '../transport/transport.ts';
import { parseTaskNotification } from './notification.ts';
import { fetchResult, type DownloadResultOptions } from './results.ts';
import { checkExclusive, checkPromptWeights, checkWebhookUrl } from './rules.ts';
import { KNOWN_OPERATIONS, normalizeTask, operationPath, polling, type ProxyOperation, type WaitForTaskOptions } from './tasks.ts';

export type { ProxyOperation, WaitForTaskOptions } from './tasks.ts';
export type { DownloadResultOptions } from './results.ts';

/** Options of `relightImageAndWait()` and `enhanceSkinCreativeAndWait()`: those of the wait, and `onStarted`. */
export interface StartAndWaitOptions extends WaitForTaskOptions {
  /** Called with the started task as soon as the proxy accepted it (record its id: the wait may end before the task does). */
  onStarted?: (task: Task) => void;
  /** Extra headers for the starting POST and every read. */
  headers?: Record<string, string>;
}

/** Options of {@link ProxyClient.confirmNotification}. */
export interface ConfirmNotificationOptions extends RequestOptions {
  /** The operation the task belongs to. Without it, each known operation is tried in turn (`'image-relight'`, then `'skin-enhancer'`). */
  operation?: ProxyOperation;
}

/** HTTP methods {@link ProxyClient.request} sends. */
export type ProxyRequestMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request of {@link ProxyClient.request}. */
export interface ProxyRequest {
  method: ProxyRequestMethod;
  /** Path below the base URL as it stands, starting with `/`, e.g. `/proxy/acme/v1/ai/image-upscaler` (no query: use `query`). */
  path: string;
  /** Query parameters; `undefined` values are left out. */
  query?: Query;
  /** JSON body (any JSON value), or a `FormData`, `Blob`, string or stream sent as is. */
  body?: unknown;
  /** Per-call options (signal, per-attempt timeout, headers, retry). A `POST` or `PATCH` is never re-sent unless these options say `retry.allowPost` (the client's does not count). */
  options?: RequestOptions;
}

/** Options of {@link ProxyClient}. */
export interface ProxyClientOptions extends ClientOptions {
  /** Service base URL (the registry's). In Node, defaults to `PLATFORMUI_BASE_URL`. */
  baseUrl?: string;
  /** Bearer token, or a function returning it. In Node, defaults to `PLATFORMUI_TOKEN`. */
  token?: Credential;
  /** Provider name replacing the literal `vendor` path segment. Default `'vendor'`. */
  vendor?: string;
}

const PROXY_CLIENT_OPTIONS = /* @__PURE__ */ joinKeys(CLIENT_OPTIONS, { token: 1, vendor: 1 } as const) satisfies OptionKeys<ProxyClientOptions>;
const START_AND_WAIT_OPTIONS = { signal: 1, timeout: 1, pollInterval: 1, onStatus: 1, maxTransientErrors: 1, notFoundGrace: 1, onStarted: 1, headers: 1 } as const satisfies OptionKeys<StartAndWaitOptions>;
const CONFIRM_NOTIFICATION_OPTIONS = /* @__PURE__ */ joinKeys(REQUEST_OPTIONS, { operation: 1 } as const) satisfies OptionKeys<ConfirmNotificationOptions>;
/** `waitForTask()`'s options: {@link WaitForTaskOptions} and the reads' `headers`. */
const WAIT_FOR_TASK_HEADERS = { signal: 1, timeout: 1, pollInterval: 1, onStatus: 1, maxTransientErrors: 1, notFoundGrace: 1, headers: 1 } as const satisfies OptionKeys<WaitForTaskOptions & { headers?: Record<string, string> }>;
const PROXY_REQUEST = { method: 1, path: 1, query: 1, body: 1, options: 1 } as const satisfies OptionKeys<ProxyRequest>;

const IMAGE_FIELDS = ['image', 'transfer_light_from_lightmap', 'transfer_light_from_reference_image'] as const;

/**
 * Client of the partner proxy. Each call starts a paid job and resolves at
 * once with its {@link Task} (`task_id`, `status`, `generated`): the `data` of
 * the task record the wire carries, `{ data: { task_id, … } }`. The POST
 * that starts a task is never sent twice, whatever `retry.allowPost` says (a
 * second one would start, and bill, a second task); reads are retried.
 *
 * @example
 * ```ts
 * const proxy = new ProxyClient({ baseUrl, token });
 * const task = await proxy.relightImage({ image: 'https://example.com/in.jpg', prompt: 'golden hour (warm:1.2)', style: 'smooth' });
 * console.log(task.task_id, task.status); // '…', 'CREATED'
 * ```
 */
export class ProxyClient {
  readonly #transport: Transport;
  /** The provider path segment in use. */
  readonly vendor: string;

  constructor(options: ProxyClientOptions = {}) {
    checkOptions(options, PROXY_CLIENT_OPTIONS, 'ProxyClient');
    this.vendor = checkTaskId(options.vendor ?? 'vendor', 'vendor');
    this.#transport = new Transport({ service: 'proxy', options, credential: options.token, ...BEARER_SERVICE });
  }

  /**
   * `POST /proxy/{vendor}/v1/ai/image-relight`: relights an image. Checked
   * first: `light_transfer_strength` 0–100, `style` one of the presets,
   * lightmap and reference image never together, every `(text:weight)` of
   * `prompt` weighing 1–1.4, `webhook_url` absolute http(s). Bytes given for
   * `image`, `transfer_light_from_lightmap` or `transfer_light_from_reference_image` are sent as base64.
   * Resolves with the started {@link Task} (the `data` of the wire's task record).
   */
  relightImage(params: RelightParams, options?: RequestOptions): APIPromise<Task> {
    return this.#start('image-relight', options, () => {
      const p = checkArgs(rules.RelightParams, params, '');
      checkRequestOptions(options, 'relightImage()');
      checkExclusive(p, 'transfer_light_from_lightmap', 'transfer_light_from_reference_image');
      checkPromptWeights(p.prompt);
      checkWebhookUrl(p.webhook_url);
      return p;
    });
  }

  /**
   * `POST /proxy/{vendor}/v1/ai/skin-enhancer/creative`: enhances skin
   * (creative mode). Checked first: `sharpen` and `smart_grain` 0–100,
   * `webhook_url` absolute http(s). Resolves with the started {@link Task}.
   */
  enhanceSkinCreative(params: SkinEnhancerCreativeParams, options?: RequestOptions): APIPromise<Task> {
    return this.#start('skin-enhancer/creative', options, () => {
      const p = checkArgs(rules.SkinEnhancerCreativeParams, params, '');
      checkRequestOptions(options, 'enhanceSkinCreative()');
      checkWebhookUrl(p.webhook_url);
      return p;
    });
  }

  /**
   * Starts a relight ({@link relightImage}, the same checks) and waits for it
   * ({@link waitForTask}): resolves with the finished task (`COMPLETED`, its
   * `generated` URLs filled). The starting POST is never re-sent; only the
   * reads are retried.
   *
   * @example
   * ```ts
   * const task = await proxy.relightImageAndWait(
   *   { image: 'https://example.com/in.jpg', style: 'brighter' },
   *   { timeout: 10 * 60_000, onStarted: (t) => console.log('started', t.task_id), onStatus: (t) => console.log(t.status) },
   * );
   * await proxy.downloadResultToFile(task.generated![0]!, 'relit.png');
   * ```
   */
  async relightImageAndWait(params: RelightParams, options: StartAndWaitOptions = {}): Promise<Task> {
    checkOptions(options, START_AND_WAIT_OPTIONS, 'relightImageAndWait()');
    return this.#startAndWait('image-relight', this.relightImage(params, startOptions(options)), options);
  }

  /**
   * Starts a creative skin enhancement ({@link enhanceSkinCreative}) and waits
   * for it (read back under `'skin-enhancer'`): resolves with the finished task.
   *
   * @example
   * ```ts
   * const task = await proxy.enhanceSkinCreativeAndWait({ image: 'https://example.com/face.jpg', sharpen: 20 }, { timeout: 600_000 });
   * const blob = await (await proxy.downloadResult(task.generated![0]!)).blob();
   * ```
   */
  async enhanceSkinCreativeAndWait(params: SkinEnhancerCreativeParams, options: StartAndWaitOptions = {}): Promise<Task> {
    checkOptions(options, START_AND_WAIT_OPTIONS, 'enhanceSkinCreativeAndWait()');
    return this.#startAndWait('skin-enhancer', this.enhanceSkinCreative(params, startOptions(options)), options);
  }

  async #startAndWait(operation: ProxyOperation, start: Promise<Task>, options: StartAndWaitOptions): Promise<Task> {
    const started = await start;
    this.#transport.log.info?.(`task ${operation} ${started.task_id} started`, { operation, taskId: started.task_id, status: started.status });
    const { onStarted, ...wait } = options;
    onStarted?.(started);
    return this.waitForTask(operation, started.task_id, wait);
  }

  /**
   * `GET /proxy/{vendor}/v1/ai/{operation}/{taskId}`: the task as the proxy
   * has it now, read once. The answer is normalized (wrapped in `data` or
   * bare, `status` or `task_status`) into a {@link Task}; unknown fields are
   * kept. A `404` rejects with `NotFoundError` (right after a start the proxy
   * may answer so for a moment; {@link waitForTask} allows for that). Retried
   * on 5xx and network failures like every GET.
   *
   * @example
   * ```ts
   * const task = await proxy.getTask('image-relight', taskId);
   * console.log(task.status, task.generated); // 'IN_PROGRESS', undefined
   * ```
   */
  getTask(operation: ProxyOperation, taskId: string, options?: RequestOptions): APIPromise<Task> {
    return APIPromise.from(() => (checkRequestOptions(options, 'getTask()'), this.#read(operation, taskId, options)));
  }

  async #read(operation: ProxyOperation, taskId: string, options?: RequestOptions): Promise<WithResponse<Task>> {
    const op = operationPath(operation);
    const id = checkTaskId(taskId);
    const p = `${path`proxy/${this.vendor}`}/v1/ai/${op}/${path`${id}`}`;
    const normalize = (data: unknown) => {
      const task = normalizeTask(data, id);
      // A record of another task is no answer about this one (a confirmed notification must be about its own task).
      if (isObject(task) && typeof task.task_id === 'string' && task.task_id !== id) {
        throw new ResponseValidationError('GET', this.#transport.displayUrl(p), [{ code: 'custom', path: ['task_id'], message: `is not the task asked for` }], scrub(data, this.#transport.secrets));
      }
      return task;
    };
    return this.#transport.request<Task>({ method: 'GET', path: p, auth: true, normalize, schema: rules.Task, options });
  }

  /**
   * Reads the task until it ends. Resolves with the record on `COMPLETED`;
   * rejects with `TaskFailedError` (its `task` is the record) on `FAILED`,
   * `TaskTimeoutError` when `timeout` (for the whole wait) runs out, and
   * `APIUserAbortError` (`cause`: `signal.reason`) at once on abort, with no
   * request after it. Between reads it waits `pollInterval`, by default
   * about 1 s growing with jitter to 10 s. Transient failures (5xx, 429,
   * network, a per-request timeout) are tolerated up to `maxTransientErrors`
   * in a row, and a `404` during the first `notFoundGrace` ms (a task just
   * created may not be visible yet); past these bounds the last error is
   * thrown as it is (`InternalServerError`, `NotFoundError`, …). Stopping the
   * wait never stops the task. `withResponse()` gives the last read's response.
   *
   * @example
   * ```ts
   * const { task_id } = await proxy.relightImage({ image, style: 'smooth' });
   * const done = await proxy.waitForTask('image-relight', task_id, {
   *   timeout: 15 * 60_000,
   *   signal: AbortSignal.timeout(20 * 60_000),
   *   onStatus: (t) => console.log(t.status),
   * });
   * console.log(done.generated);
   * ```
   */
  waitForTask(operation: ProxyOperation, taskId: string, options: WaitForTaskOptions & { headers?: Record<string, string> } = {}): APIPromise<Task> {
    return APIPromise.from(async () => {
      operationPath(operation);
      const id = checkId(taskId, 'taskId');
      checkOptions(options, WAIT_FOR_TASK_HEADERS, 'waitForTask()');
      const headers = options.headers;
      return (await polling()).pollTask(operation, id, (signal) => this.#read(operation, id, { signal, headers }), options, (task) => scrub(task, this.#transport.secrets) as Task, this.#transport.log);
    });
  }

  /**
   * Fetches a result URL (an entry of `generated`) with a bare GET: no
   * token, no client header, hook or cookie, redirects followed with nothing
   * added. Only absolute http(s) URLs (else `InvalidArgumentError`). Resolves
   * with the `Response` (2xx; read it as `blob()`, `arrayBuffer()` or
   * `body`); a non-2xx rejects with an `APIError` whose URL is redacted.
   *
   * @example
   * ```ts
   * const res = await proxy.downloadResult(task.generated![0]!);
   * const bytes = new Uint8Array(await res.arrayBuffer());
   * ```
   */
  downloadResult(url: string | URL, options?: DownloadResultOptions): Promise<Response> {
    return fetchResult(this.#transport, url, options);
  }

  /**
   * Node only: streams a result URL to a file (as {@link downloadResult}:
   * no credential goes along). Resolves with the number of bytes written.
   *
   * @example
   * ```ts
   * const task = await proxy.relightImageAndWait({ image, style: 'brighter' });
   * const bytes = await proxy.downloadResultToFile(task.generated![0]!, 'relit.png');
   * ```
   */
  async downloadResultToFile(url: string | URL, destination: string, options?: DownloadResultOptions): Promise<number> {
    checkId(destination, 'destination');
    const res = await fetchResult(this.#transport, url, options, 'downloadResultToFile()');
    if (!res.body) return 0;
    return platform.saveToFile(res.body, destination);
  }

  /**
   * Confirms a webhook notification with the proxy itself: parses `body` as
   * {@link parseTaskNotification} does, then reads that task by id with this
   * client's token (under `operation`, or each known operation in turn) and
   * resolves with the proxy's record, not the body's. A body naming no task
   * rejects with `InvalidArgumentError`; a task the proxy does not know (a
   * forged body, or one for another account) with `TaskNotFoundError`. A
   * notification is not signed: only the record returned here is evidence.
   *
   * @example
   * ```ts
   * http.createServer(async (req, res) => {
   *   const chunks = []; for await (const c of req) chunks.push(c);
   *   try {
   *     const task = await proxy.confirmNotification(Buffer.concat(chunks), { operation: 'image-relight' });
   *     if (task.status === 'COMPLETED') await proxy.downloadResultToFile(task.generated![0]!, `${task.task_id}.png`);
   *     res.writeHead(204).end();
   *   } catch (err) {
   *     res.writeHead(err instanceof TaskNotFoundError ? 403 : 400).end();
   *   }
   * });
   * ```
   */
  confirmNotification(body: unknown, options: ConfirmNotificationOptions = {}): APIPromise<Task> {
    return APIPromise.from(async () => {
      const note = parseTaskNotification(body);
      if (!note.task_id) throw new InvalidArgumentError('is missing: nothing to confirm', 'body.task_id');
      checkOptions(options, CONFIRM_NOTIFICATION_OPTIONS, 'confirmNotification()');
      const { operation, ...request } = options;
      const operations = operation === undefined ? KNOWN_OPERATIONS : [operation];
      let notFound: unknown;
      for (const op of operations) {
        try {
          return await this.#read(op, note.task_id, request);
        } catch (err) {
          if (!(err instanceof NotFoundError)) throw err;
          notFound = err;
        }
      }
      throw new TaskNotFoundError(note.task_id, operations, { cause: notFound });
    });
  }

  /**
   * Any other request to the proxy (the partner operations the SDK does not
   * model yet), with this client's base URL, Bearer token, per-call options,
   * error classes and redaction. `path` is below the base URL as it stands
   * (the vendor segment is yours to write). The answer's JSON is returned
   * as is (`undefined` when empty). A `POST` (or `PATCH`) may start a paid
   * task, so it is never re-sent, whatever happens, unless this call's own
   * `options.retry.allowPost` says so (the client-wide `allowPost` does not
   * cover it); other methods are retried like every request.
   *
   * @example
   * ```ts
   * const started = await proxy.request({
   *   method: 'POST',
   *   path: '/proxy/acme/v1/ai/image-upscaler',
   *   body: { image: 'https://example.com/in.jpg', scale_factor: 2 },
   * });
   * ```
   */
  request(req: ProxyRequest): APIPromise<unknown> {
    return APIPromise.from(async () => {
      checkOptions(req, PROXY_REQUEST, 'request()');
      checkOptions(req?.options, REQUEST_OPTIONS, 'request()', 'options.');
      const method = req?.method;
      if (!METHODS.includes(method)) throw new InvalidArgumentError(`must be one of ${METHODS.join(', ')}`, 'method');
      const p = checkRequestPath(req.path);
      const options = req.options;
      // A POST here may start a paid task, and only the call knows: the client-wide allowPost does not cover it.
      const paid = (method === 'POST' || method === 'PATCH') && (options?.retry as { allowPost?: boolean } | undefined)?.allowPost !== true;
      const raw = isRawBody(req.body);
      return this.#transport.request<unknown>({
        // The transport's type names three methods; it sends any.
        method: method as 'GET' | 'POST' | 'DELETE',
        path: p,
        query: req.query,
        ...(req.body === undefined ? {} : raw ? { body: req.body as RequestBody } : { json: req.body }),
        auth: true,
        options,
        paid,
      });
    });
  }

  #start(operation: string, options: RequestOptions | undefined, check: () => Record<string, unknown>): APIPromise<Task> {
    return APIPromise.from(async () => {
        const body: Record<string, unknown> = { ...check() };
        for (const f of IMAGE_FIELDS) {
          const v = body[f];
          if (v !== undefined && typeof v !== 'string') body[f] = await toBase64(v as Blob | Uint8Array | ArrayBuffer);
        }
        // The wire's task record is `{ data: task }`; callers get the task itself.
        const { data: record, response } = await this.#transport.request<TaskRecord>({
          method: 'POST',
          path: `${path`proxy/${this.vendor}`}/v1/ai/${operation}`,
          json: body,
          auth: true,
          schema: rules.TaskRecord,
          options,
          paid: true,
        });
        return { data: record.data, response };
    });
  }
}

const METHODS: readonly ProxyRequestMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A task id: one path segment that URL parsing cannot turn into another path (`.`, `..`, their `%2e` forms). */
function checkTaskId(value: unknown, name = 'taskId'): string {
  const id = checkId(value, name);
  if (/^(\.|%2e){1,2}$/i.test(id) || /[\x00-\x1f\x7f]/.test(id)) throw new InvalidArgumentError('must be one path segment, not "." or ".."', name);
  return id;
}

/** A `path` of `request()`: `/` then a path without query, fragment, scheme or dot segments; returned without its leading `/`. */
function checkRequestPath(p: unknown): string {
  // fetch's URL parser reads `\\` as `/` and drops tabs and newlines: neither may smuggle a `..` segment in.
  if (typeof p !== 'string' || !/^\/(?!\/)[^?#\\\x00-\x1f\x7f]*$/.test(p) || /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(p)) {
    throw new InvalidArgumentError("must be '/' then a path below the base URL, without '?', '#', '.' or '..' segments", 'path');
  }
  return p.slice(1);
}

function isRawBody(b: unknown): boolean {
  return typeof b === 'string' || b instanceof FormData || b instanceof Blob || b instanceof ReadableStream;
}

/** The options of the POST that starts a task: the caller's signal and headers only (never a retry). */
function startOptions(o: StartAndWaitOptions): RequestOptions {
  return { ...(o.signal ? { signal: o.signal } : {}), ...(o.headers ? { headers: o.headers } : {}) };
}
