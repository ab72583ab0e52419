// The queue's API as the issue-26 contract states it, for the process tests and their child scripts,
// loaded from src/queue/index.ts at run time. Written while the real entry was being built on another
// branch (its placeholder exported nothing, so a static import would not type-check); once
// src/queue/index.ts exports JobQueue, `loadQueue()` can give way to a plain
// `import { JobQueue, QueueWorker } from '../../../src/queue/index.ts'` and these types to the real ones.
import type { OutputFile, PoolServer } from '../../../src/index.ts';
import type { NodeOutputs } from '../../../src/schemas/cloud.ts';

export type QueueState = 'waiting' | 'active' | 'completed' | 'failed' | 'delayed' | 'prioritized' | 'waiting-children' | 'unknown';

export interface QueueJobResult {
  promptId: string;
  outputs: Record<string, NodeOutputs>;
  files: OutputFile[];
  server: string;
  baseUrl: string;
  resubmittedFrom?: { server: string; promptId: string | undefined };
}

export interface QueueJob {
  readonly id: string;
  state(): Promise<QueueState>;
  result(): Promise<QueueJobResult>;
  cancel(): Promise<void>;
}

export interface JobQueueLike {
  add(workflow: unknown, options?: { jobId?: string; priority?: number; timeout?: number; waitForWorker?: number }): Promise<QueueJob>;
  job(id: string): QueueJob;
  counts(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface QueueWorkerOptions {
  connection: string;
  name?: string;
  servers: PoolServer[];
  concurrency?: number;
  stalledInterval?: number;
  lockDuration?: number;
  serverLostAfter?: number;
  resubmitOnServerLoss?: boolean;
  logLevel?: 'off' | 'error' | 'warn' | 'info' | 'debug';
}

export interface QueueWorkerLike {
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface QueueModule {
  JobQueue: new (options: { connection: string; name?: string }) => JobQueueLike;
  QueueWorker: new (options: QueueWorkerOptions) => QueueWorkerLike;
}

/** The queue entry's module as the contract types it. */
export async function loadQueue(): Promise<QueueModule> {
  return (await import('../../../src/queue/index.ts')) as unknown as QueueModule;
}

/** Whether the queue's core has landed: src/queue/index.ts exports JobQueue (the process tests skip until then). */
export async function coreReady(): Promise<boolean> {
  return 'JobQueue' in (await import('../../../src/queue/index.ts'));
}
