/**
 * The partner proxy's tasks (`registry-and-proxy.md`, endpoints 6–7): they
 * start as `CREATED`, move on a timer and notify `webhook_url` on every
 * status. Nothing is computed; a completed task's result is a small fixed PNG
 * addressed under the result server's origin.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { Faults } from './faults.ts';
import type { RecordedRequest } from './http.ts';
import { DEFAULT_TOKENS } from './registry.ts';

/** Statuses a task goes through. The spec names only `CREATED`; the rest is the emulator's choice. */
export type TaskStatus = 'CREATED' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

/** The two operations, as they appear in the path after `/v1/ai/`. */
export type ProxyOperation = 'image-relight' | 'skin-enhancer/creative';

/**
 * How the status routes (`GET …/image-relight/:task_id`, `GET …/skin-enhancer/:task_id`)
 * shape their answer: `wrapped` is `{ data: { task_id, status, generated, … } }`
 * like the POST answers; `bare` is `{ task_id, task_status, generated, … }`
 * (no wrapper, status under `task_status`), as the live proxy may answer.
 */
export type ProxyShape = 'wrapped' | 'bare';

/** Request headers that carry credentials: the result origin refuses any request with one of them. */
export const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'x-api-key', 'proxy-authorization'] as const;

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
  /** Shape of the status GET answers. Default `'wrapped'`. See {@link ProxyShape}. */
  shape?: ProxyShape;
  /**
   * Each new task answers `404` to its first `notFoundPolls` status GETs, as
   * the live proxy may right after creation. Default 0.
   */
  notFoundPolls?: number;
  /**
   * Origin (`http://host:port`) result URLs are addressed under. The emulator
   * sets it to its result server; unset, results are addressed under the
   * origin the task was started through.
   */
  resultsOrigin?: string;
}

/** A 1×1 PNG: enough for a client to download and decode a "result". */
export const RESULT_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * The proxy's in-memory state and timers. Mutable knobs (`stepMs`,
 * `webhookTimeoutMs`, `failNext`, `shape`, `notFoundPolls`, `resultsOrigin`)
 * are read when used, so tests may change them at any time.
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
  /** Shape of the status GET answers (`'wrapped'` by default); read on every GET. */
  shape: ProxyShape;
  /** How many status GETs each task answers `404` to after creation; read when a task starts (default 0). */
  notFoundPolls: number;
  /**
   * Origin of the result server (e.g. `http://127.0.0.1:41235`), where the
   * `generated` URLs of completed tasks point; read when a task completes.
   * `startEmulator()` sets it. Unset: the origin the task was started through.
   */
  resultsOrigin: string | undefined;
  /**
   * Every request the result server received (bounded, oldest first), refused
   * ones included, with its headers as sent: proof of which credentials, if
   * any, reached the result host. Cleared by {@link reset}.
   */
  readonly resultRequests: RecordedRequest[] = [];
  /** Fault switches of the result server only (the emulator's `faults` do not apply there). */
  readonly resultFaults = new Faults();

  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  /** Tasks that will end FAILED. */
  readonly #doomed = new Set<string>();
  /** Origin (`http://host:port`) each running task's results will be addressed under. */
  readonly #origins = new Map<string, string>();
  // Per-task queue of notifications, so a receiver sees statuses in order even when stepMs is tiny.
  readonly #outbox = new Map<string, Promise<void>>();
  /** Status GETs still to answer 404, per task. */
  readonly #hidden = new Map<string, number>();
  #abort = new AbortController();
  #closed = false;

  constructor(options: ProxyStateOptions = {}) {
    this.tokens = new Set(options.tokens ?? Object.keys(DEFAULT_TOKENS));
    this.stepMs = options.stepMs ?? DEFAULT_STEP_MS;
    this.webhookTimeoutMs = options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
    this.shape = options.shape ?? 'wrapped';
    this.notFoundPolls = options.notFoundPolls ?? 0;
    this.resultsOrigin = options.resultsOrigin;
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
    if (this.notFoundPolls > 0) this.#hidden.set(task.task_id, Math.floor(this.notFoundPolls));
    this.#schedule(task);
    return task;
  }

  /** The wire form `{ data: {...} }` of a task: internal bookkeeping left out. */
  view(task: ProxyTask): { data: Record<string, unknown> } {
    const { request: _request, webhooks: _webhooks, ...data } = task;
    return { data: structuredClone(data) };
  }

  /** The answer of a status GET in the current {@link shape}. */
  statusView(task: ProxyTask): Record<string, unknown> {
    const { data } = this.view(task);
    if (this.shape !== 'bare') return { data };
    const { status, ...rest } = data;
    return { ...rest, task_status: status };
  }

  /**
   * The task a status GET for `operation` (`'image-relight'`, or
   * `'skin-enhancer'` for every skin-enhancer mode) finds, `undefined` for an
   * unknown id, one of another operation, or one still within its `notFoundPolls`
   * (that GET is counted).
   */
  lookup(operation: 'image-relight' | 'skin-enhancer', taskId: string): ProxyTask | undefined {
    const task = this.tasks.get(taskId);
    if (!task) return undefined;
    if (task.operation !== operation && !task.operation.startsWith(`${operation}/`)) return undefined;
    const hidden = this.#hidden.get(taskId) ?? 0;
    if (hidden > 0) {
      if (hidden === 1) this.#hidden.delete(taskId);
      else this.#hidden.set(taskId, hidden - 1);
      return undefined;
    }
    return task;
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
    this.resultRequests.length = 0;
    this.resultFaults.reset();
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
    this.#hidden.clear();
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
        const origin = this.resultsOrigin ?? this.#origins.get(task.task_id);
        task.generated = [`${origin}/proxy/results/${task.task_id}/0.png`];
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

