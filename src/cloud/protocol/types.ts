/**
 * What differs between the cloud and a local server, behind one interface
 * (DESIGN "Rooms of 2026-11-27"): where a job's status and record are read,
 * how one job is stopped, what an interrupt sends, what the jobs list takes.
 * One file per kind (`cloud.ts`, `local.ts`, `v2.ts`); `CloudClient` chooses
 * one in its constructor (`v1.ts` for the first two: their routes load on the
 * first request about a job) and never branches on the kind again.
 *
 * @module
 */
import type { ListJobsParams } from '../../schemas/cloud.ts';
import type { Typed } from '../../schemas/rule.ts';
import type { RequestOptions } from '../../transport/options.ts';
import type { WithResponse } from '../../transport/promise.ts';
import type { JobRecord, JobStatusResult } from '../jobs.ts';
import type { StopJobOptions } from './stop.ts';

/** The kind of server a client talks to: the cloud (v1), a self-hosted local server, or Comfy API v2. */
export type ServerKind = 'cloud' | 'local' | 'v2';

/** One kind of server's requests about one job: its status, its record, its stop (loaded on first use: `v1.ts`). */
export interface JobRoutes {
  /**
   * The job's status with its phase; {@link NotFoundError} when the server
   * does not know it. Also how a submission whose answer was lost is looked up.
   */
  status(id: string, options?: RequestOptions): Promise<WithResponse<JobStatusResult>>;
  /** The job's record, outputs included; {@link NotFoundError} when the server does not know it. */
  record(id: string, options?: RequestOptions): Promise<WithResponse<JobRecord>>;
  /**
   * Stops this job wherever it is (pending or running), and never another;
   * resolves once the server said or showed it stopped, with the answer of
   * the last request; {@link JobNotStoppedError} when it could not be seen
   * stopped within `confirmWithin`.
   */
  stopJob(id: string, options?: StopJobOptions): Promise<Response>;
}

/** What one kind of server's protocol says without a request (at start, beside the routes' door). */
export interface ProtocolConstants {
  /** The body of `POST /api/interrupt` for "stop `promptId` if it runs"; `undefined`: no body (the cloud's interrupt takes none). */
  interruptBody(promptId: string | undefined): { prompt_id: string } | undefined;
  /** What this kind's `GET /api/jobs` takes (its statuses, sort keys, filters), checked before the request. */
  readonly listJobsParams: Typed<ListJobsParams>;
}

/** One kind of server's answers to the questions whose routes differ. */
export interface ServerProtocol extends JobRoutes, ProtocolConstants {}
