/**
 * The partner-proxy service of the emulator (`registry-and-proxy.md`,
 * endpoints 6–7): AI image jobs that start as `CREATED`, move on a timer and
 * notify `webhook_url` on every status. Nothing is computed; results are a
 * small fixed PNG served by the emulator itself.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { requireBearer } from './auth.ts';
import { HttpError, sendJson, type Route } from './http.ts';
import { DEFAULT_TOKENS } from './registry.ts';

/** Statuses a task goes through. The spec names only `CREATED`; the rest is the emulator's choice. */
export type TaskStatus = 'CREATED' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

/** The two operations, as they appear in the path after `/v1/ai/`. */
export type ProxyOperation = 'image-relight' | 'skin-enhancer/creative';

/** Default delay between two status changes. */
export const DEFAULT_STEP_MS = 50;

/** Default time a webhook receiver gets to answer. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 2000;

/** Body cap of the two job routes: images travel inline as base64, so 1 MiB is too small. */
export const PROXY_BODY_LIMIT = 16 * 1024 * 1024;

/** An `image` starting with this scheme makes the task end `FAILED` (a fault switch reachable from any client). */
export const FAIL_IMAGE_PREFIX = 'fail://';

/** The style presets of image-relight. */
export const RELIGHT_STYLES = ['standard', 'darker_but_realistic', 'clean', 'smooth', 'brighter', 'contrasted_n_hdr', 'just_composition'] as const;

/** One webhook notification attempt. */
export interface WebhookAttempt {
  /** Status the notification announced. */
  status: TaskStatus;
  /** Whether the receiver answered 2xx. */
  ok: boolean;
  /** HTTP status of the receiver's answer, when there was one. */
  httpStatus?: number;
  /** Why it failed without an answer (timeout, refused connection…). */
  error?: string;
}

/** A task as the emulator stores it. {@link ProxyState.view} gives its wire form. */
export interface ProxyTask {
  task_id: string;
  status: TaskStatus;
  /** Result references; filled on `COMPLETED`. */
  generated: string[];
  operation: ProxyOperation;
  /** The `:vendor` path segment the task was started under. */
  vendor: string;
  created_at: string;
  updated_at: string;
  webhook_url?: string;
  /** Set when `webhook_url` was accepted but will never be called. */
  webhook_skipped?: 'non-loopback';
  /** The validated request body. Not on the wire. */
  request: Record<string, unknown>;
  /** Notification attempts, in order. Not on the wire. */
  webhooks: WebhookAttempt[];
}

/** Options of {@link ProxyState}. */
export interface ProxyStateOptions {
  /** Accepted bearer tokens. Default: the registry's default tokens. */
  tokens?: Iterable<string>;
  /** Delay between status changes, in ms. Default {@link DEFAULT_STEP_MS}. */
  stepMs?: number;
  /** Timeout of one webhook call, in ms. Default {@link DEFAULT_WEBHOOK_TIMEOUT_MS}. */
  webhookTimeoutMs?: number;
  /** Clock, replaceable in tests. */
  now?: () => Date;
}

// A 1×1 PNG: enough for a client to download and decode a "result".
const RESULT_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * The proxy's in-memory state and timers. Mutable knobs (`stepMs`,
 * `webhookTimeoutMs`, `failNext`) are read when used, so tests may change them
 * at any time.
 */
export class ProxyState {
  readonly tokens: Set<string>;
  /** Every task started, by id. */
  readonly tasks = new Map<string, ProxyTask>();
  stepMs: number;
  webhookTimeoutMs: number;
  /** Fault switch: the next task started ends `FAILED`; consumed by that task. */
  failNext = false;
  now: () => Date;

  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  /** Tasks that will end FAILED. */
  readonly #doomed = new Set<string>();
  /** Origin (`http://host:port`) each running task's results will be addressed under. */
  readonly #origins = new Map<string, string>();
  // Per-task queue of notifications, so a receiver sees statuses in order even when stepMs is tiny.
  readonly #outbox = new Map<string, Promise<void>>();
  #abort = new AbortController();
  #closed = false;

  constructor(options: ProxyStateOptions = {}) {
    this.tokens = new Set(options.tokens ?? Object.keys(DEFAULT_TOKENS));
    this.stepMs = options.stepMs ?? DEFAULT_STEP_MS;
    this.webhookTimeoutMs = options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
  }

  /** Starts a task (already validated) and schedules its progress. */
  start(operation: ProxyOperation, vendor: string, request: Record<string, unknown>, origin: string): ProxyTask {
    const at = this.now().toISOString();
    const task: ProxyTask = {
      task_id: randomUUID(),
      status: 'CREATED',
      generated: [],
      operation,
      vendor,
      created_at: at,
      updated_at: at,
      request,
      webhooks: [],
    };
    const webhook = request.webhook_url;
    if (typeof webhook === 'string') {
      task.webhook_url = webhook;
      if (!isLoopback(webhook)) task.webhook_skipped = 'non-loopback';
    }
    if (this.failNext || String(request.image).startsWith(FAIL_IMAGE_PREFIX)) this.#doomed.add(task.task_id);
    this.failNext = false;
    this.tasks.set(task.task_id, task);
    this.#origins.set(task.task_id, origin);
    this.#schedule(task);
    return task;
  }

  /** The wire form `{ data: {...} }` of a task: internal bookkeeping left out. */
  view(task: ProxyTask): { data: Record<string, unknown> } {
    const { request: _request, webhooks: _webhooks, ...data } = task;
    return { data: structuredClone(data) };
  }

  /** Queues the notification of the task's current status (no-op without a callable webhook). */
  notify(task: ProxyTask): void {
    if (!task.webhook_url || task.webhook_skipped) return;
    const url = task.webhook_url;
    const status = task.status;
    // Snapshot now: a late delivery must still announce the status it was sent for.
    const body = JSON.stringify(this.view(task));
    const id = task.task_id;
    // Captured now: after reset() the state has a fresh controller, but this delivery belongs to the old run.
    const signal = this.#abort.signal;
    const next = (this.#outbox.get(id) ?? Promise.resolve()).then(() => this.#deliver(task, { url, status, body, signal }));
    this.#outbox.set(id, next);
    void next.then(() => {
      if (this.#outbox.get(id) === next) this.#outbox.delete(id);
    });
  }

  /** Drops every task and stops timers and pending webhooks; the state stays usable. */
  reset(): void {
    this.#stop();
    this.tasks.clear();
    this.failNext = false;
    this.#abort = new AbortController();
  }

  /** Stops every timer and aborts pending webhooks for good (called by the emulator's close()). */
  close(): void {
    this.#closed = true;
    this.#stop();
  }

  /** Whether `file` is a result of a completed task `taskId`. */
  hasResult(taskId: string, file: string): boolean {
    const task = this.tasks.get(taskId);
    return task?.status === 'COMPLETED' && task.generated.some((ref) => ref.endsWith(`/${taskId}/${file}`));
  }

  #stop(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#doomed.clear();
    this.#origins.clear();
    this.#outbox.clear();
    this.#abort.abort();
  }

  #schedule(task: ProxyTask): void {
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#advance(task);
    }, this.stepMs);
    // Timers never hold a test process open; close() clears them anyway.
    timer.unref();
    this.#timers.add(timer);
  }

  #advance(task: ProxyTask): void {
    if (task.status === 'CREATED') {
      this.#set(task, 'IN_PROGRESS');
      this.#schedule(task);
    } else if (task.status === 'IN_PROGRESS') {
      if (this.#doomed.delete(task.task_id)) {
        this.#set(task, 'FAILED');
      } else {
        task.generated = [`${this.#origins.get(task.task_id)}/proxy/results/${task.task_id}/0.png`];
        this.#set(task, 'COMPLETED');
      }
      this.#origins.delete(task.task_id);
    }
  }

  #set(task: ProxyTask, status: TaskStatus): void {
    task.status = status;
    task.updated_at = this.now().toISOString();
    this.notify(task);
  }

  async #deliver(task: ProxyTask, n: { url: string; status: TaskStatus; body: string; signal: AbortSignal }): Promise<void> {
    const { url, status, body, signal: abort } = n;
    if (abort.aborted) return;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'platformui-emulator' },
        body,
        // A loopback receiver must not bounce the call to another host.
        redirect: 'manual',
        signal: AbortSignal.any([abort, AbortSignal.timeout(this.webhookTimeoutMs)]),
      });
      await res.body?.cancel();
      task.webhooks.push({ status, ok: res.ok, httpStatus: res.status });
    } catch (err) {
      if (abort.aborted) return; // reset/close, not the receiver's fault
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      task.webhooks.push({ status, ok: false, error: `${err instanceof Error ? err.message : String(err)}${cause}` });
    }
  }
}

/** Whether a URL points at this machine (127.0.0.0/8, localhost, [::1]): the only webhooks the emulator calls. */
export function isLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

// ---------------------------------------------------------------------------
// Validation: the same rules as the SDK (proxy/rules.ts, schemas/proxy.ts),
// written again so a bug on one side is caught by the other.

type Check = (value: unknown, field: string) => void;

function bad(field: string, message: string): HttpError {
  return new HttpError(400, `${field}: ${message}`, 'bad_request');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const string: Check = (v, f) => {
  if (typeof v !== 'string') throw bad(f, 'must be a string');
};
const boolean: Check = (v, f) => {
  if (typeof v !== 'boolean') throw bad(f, 'must be a boolean');
};
const number: Check = (v, f) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(f, 'must be a number');
};
const percent: Check = (v, f) => {
  number(v, f);
  if ((v as number) < 0 || (v as number) > 100) throw bad(f, 'must be from 0 to 100');
};

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

// Standard or URL-safe alphabet, padding optional; whitespace (MIME line breaks) is stripped first.
const BASE64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/;
const DATA_URI = /^data:[^,]*;base64,/i;

const image: Check = (v, f) => {
  if (typeof v !== 'string' || v === '') throw bad(f, 'must be a non-empty string: base64 data or an http(s) URL');
  if (f === 'image' && v.startsWith(FAIL_IMAGE_PREFIX)) return;
  // Base64 never holds a colon, so anything with a scheme is a URL.
  if (/^[a-z][a-z0-9+.-]*:/i.test(v) && !DATA_URI.test(v)) {
    if (!isHttpUrl(v)) throw bad(f, 'must be base64 data or an absolute http(s) URL');
    return;
  }
  if (!BASE64.test(v.replace(DATA_URI, '').replace(/\s+/g, ''))) throw bad(f, 'is neither base64 data nor an http(s) URL');
};

const webhookUrl: Check = (v, f) => {
  if (typeof v !== 'string' || !isHttpUrl(v)) throw bad(f, 'must be an absolute http(s) URL');
};

const style: Check = (v, f) => {
  if (!(RELIGHT_STYLES as readonly unknown[]).includes(v)) throw bad(f, `must be one of ${RELIGHT_STYLES.join(', ')}`);
};

// `(text:weight)`: innermost parentheses holding a colon; a non-numeric weight is prose, not emphasis.
const EMPHASIS = /\(([^()]*):([^():]*)\)/g;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;

const prompt: Check = (v, f) => {
  string(v, f);
  for (const m of (v as string).matchAll(EMPHASIS)) {
    const raw = (m[2] ?? '').trim();
    if (!DECIMAL.test(raw)) continue;
    const weight = Number(raw);
    if (weight < 1 || weight > 1.4) throw bad(f, `emphasis weight ${raw} in "${m[0]}" is outside 1–1.4`);
  }
};

const ADVANCED: Record<string, Check> = {
  blacks: number,
  brightness: number,
  contrast: number,
  saturation: number,
  whites: number,
  engine: string,
  transfer_light_a: string,
  transfer_light_b: string,
  fixed_generation: boolean,
};

const advancedSettings: Check = (v, f) => {
  if (!isObject(v)) throw bad(f, 'must be an object');
  checkMembers(v, ADVANCED, `${f}.`);
};

const RELIGHT: Record<string, Check> = {
  image,
  prompt,
  style,
  change_background: boolean,
  interpolate_from_original: boolean,
  light_transfer_strength: percent,
  preserve_details: boolean,
  transfer_light_from_lightmap: image,
  transfer_light_from_reference_image: image,
  webhook_url: webhookUrl,
  advanced_settings: advancedSettings,
};

const SKIN: Record<string, Check> = {
  image,
  sharpen: percent,
  smart_grain: percent,
  webhook_url: webhookUrl,
};

// Unknown members are refused, like the SDK's strict schemas: a misspelt
// option of a paid job should fail loudly, not be silently dropped.
function checkMembers(obj: Record<string, unknown>, checks: Record<string, Check>, prefix: string): void {
  for (const [key, value] of Object.entries(obj)) {
    const check = checks[key];
    if (!check) throw bad(`${prefix}${key}`, 'is not a known field');
    check(value, `${prefix}${key}`);
  }
}

/** Validates a job body; `image` is the one required member. Throws 400 naming the field. */
export function validateJob(operation: ProxyOperation, body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw bad('body', 'must be a JSON object');
  if (body.image === undefined) throw bad('image', 'is required');
  checkMembers(body, operation === 'image-relight' ? RELIGHT : SKIN, '');
  if (body.transfer_light_from_lightmap !== undefined && body.transfer_light_from_reference_image !== undefined) {
    throw bad('transfer_light_from_reference_image', 'cannot be combined with transfer_light_from_lightmap');
  }
  return body;
}

// ---------------------------------------------------------------------------
// Routes

/**
 * The proxy routes. Decisions where the spec is silent:
 *
 * - Any `:vendor` is accepted and recorded on the task.
 * - `image` is required; unknown members are 400.
 * - Statuses: `CREATED` → `IN_PROGRESS` → `COMPLETED` (or `FAILED`), one step
 *   every `stepMs`. The webhook receives `{ data: task }` for each of them,
 *   `CREATED` included, in order, but only on loopback; other hosts are
 *   accepted and never called (`webhook_skipped: 'non-loopback'`).
 * - `GET /proxy/results/:taskId/:file` serves the results without auth, like
 *   a CDN link; 404 until the task is `COMPLETED`.
 */
export function proxyRoutes(state: ProxyState): Route[] {
  const job = (operation: ProxyOperation): Route => ({
    method: 'POST',
    path: `/proxy/:vendor/v1/ai/${operation}`,
    bodyLimit: PROXY_BODY_LIMIT,
    handler: async (ctx) => {
      requireBearer(ctx, (token) => state.tokens.has(token));
      const body = validateJob(operation, await ctx.readJson());
      const task = state.start(operation, ctx.params.vendor ?? 'vendor', body, ctx.origin);
      sendJson(ctx.res, 200, state.view(task));
      state.notify(task);
    },
  });
  return [
    job('image-relight'),
    job('skin-enhancer/creative'),
    {
      method: 'GET',
      path: '/proxy/results/:taskId/:file',
      handler: (ctx) => {
        const { taskId = '', file = '' } = ctx.params;
        if (!state.hasResult(taskId, file)) throw new HttpError(404, `No result ${file} for task ${taskId}`);
        ctx.res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(RESULT_PNG.length) });
        ctx.res.end(ctx.method === 'HEAD' ? undefined : RESULT_PNG);
      },
    },
  ];
}
