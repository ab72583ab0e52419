/**
 * The small pieces a job's run is made of in the emulated cloud: what a
 * preview node shows, a node's progress state, the abortable wait between
 * steps, the cache key of a workflow, the seed of its images, and what a
 * forced failure says.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { PromptNode } from './cloud-nodes.ts';
import type { Job } from './cloud-job-types.ts';
import { asLink } from '../workflow/issue.ts';

const EXCEPTION_MESSAGES: Record<string, string> = {
  ValidationError: 'Invalid workflow or inputs: value out of range for this model',
  ModelDownloadError: "Failed to download model 'emulator_model_v1.safetensors': 404 Not Found",
  ImageDownloadError: 'Failed to download input image from https://images.example.com/input.png: 403 Forbidden',
  OOMError: 'Allocation on device 0 would exceed allowed memory. (out of memory)',
  InsufficientFundsError: 'Insufficient balance to run this partner node',
  InactiveSubscriptionError: 'Subscription is not active',
};

/** The `exception_message` of a forced failure that names none: one typical of its type. */
export function exceptionMessage(type: string): string {
  return EXCEPTION_MESSAGES[type] ?? `${type} raised by the emulator`;
}

/**
 * What `PreviewAny` shows of its `source`, as the real node does: a string as
 * it is, a number or flag as Python prints it, anything else as indented
 * JSON. A link names what it reads (the emulator has no tensors to print).
 */
export function previewText(source: unknown, prompt: Record<string, PromptNode>): string {
  const link = asLink(source);
  if (link) return `output ${link[1]} of node ${link[0]} (${prompt[link[0]]?.class_type ?? 'unknown'})`;
  if (typeof source === 'string') return source;
  if (typeof source === 'boolean') return source ? 'True' : 'False';
  if (typeof source === 'number') return String(source);
  return source === undefined || source === null ? 'None' : JSON.stringify(source, null, 4);
}

/** A node's entry in a `progress_state` message. */
export function nodeState(job: Job, id: string, value: number, max: number, state: 'running' | 'finished'): Record<string, unknown> {
  return { value, max, state, node_id: id, prompt_id: job.prompt_id, display_node_id: id, parent_node_id: null, real_node_id: id };
}

/** Resolves true after `ms`, false as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    // Job timers never hold a process open on their own; the listening server does while it runs.
    timer.unref();
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Canonical JSON (sorted keys) hash: identical workflows hit the cache whatever their key order. */
export function workflowHash(prompt: unknown): string {
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])]));
    return v;
  };
  return createHash('sha256').update(JSON.stringify(canon(prompt))).digest('hex');
}

/** FNV-1a of `text`: the seed of a job's deterministic images and names. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
