/**
 * Job orchestration: submit under an id chosen before the request, follow on
 * the shared socket, fall back to polling, and settle exactly once, with
 * every output file. The follower of a job is a state machine
 * (`follow/states.ts`, `follow/follower.ts`): `submitting`, `live` (socket
 * open), `polling` (socket down), `settling` (reading the ending), `settled`.
 * The socket is a live feed; the job status is the truth (a completion missed
 * while disconnected is found by polling) and the job record is where outputs
 * the socket did not carry are recovered (DESIGN §8).
 *
 * Depends on the narrow {@link JobBackend}, not on `CloudClient`. Loaded with
 * the socket (re-exported here) on the first `run()`, `follow()`,
 * `waitForJob()` or `connect()` (`realtime.ts`): a client that only makes
 * REST calls never loads it; its options are `run-options.ts`.
 *
 * @module
 */
import type { Workflow } from '../schemas/cloud.ts';
import { checkInterval } from '../transport/options.ts';
import type { JobResult, RunOptions, WaitForJobOptions } from './run-options.ts';
import { sleep } from '../transport/sleep.ts';
import { realClock, type Clock } from './follow/clock.ts';
import { JobFollower, type FollowSocket } from './follow/follower.ts';
import { settleEnded } from './follow/records.ts';
import { isFinalPhase, type JobBackend, type JobRecord } from './jobs.ts';
import { randomUuid } from './uuid.ts';
export { CloudSocket } from './socket.ts';

export type { FollowOptions, JobResult, RunOptions, WaitForJobOptions } from './run-options.ts';
/** A run's input files uploaded into its workflow: only a run with `inputs` needs it, and it loads with the follower. */
export { withInputs } from './inputs.ts';

/** Polls a job until it ends. See `CloudClient.waitForJob`. */
export async function waitForJob(jobs: JobBackend, promptId: string, options: WaitForJobOptions = {}): Promise<JobRecord> {
  const { pollInterval, ...request } = options;
  checkInterval(pollInterval, 'pollInterval');
  const interval = pollInterval ?? 1000;
  for (;;) {
    const s = await jobs.getJobStatus(promptId, request);
    if (isFinalPhase(s.phase)) return settleEnded(jobs, promptId, s, request);
    await sleep(interval, options.signal, realClock);
  }
}

/**
 * Submits `workflow` and follows it to the end. See `CloudClient.run`. The
 * job's id is chosen first (`opts.promptId`, else a random UUID) and the
 * socket subscribed under it before the request, so no event of the job is
 * missed; a server that answers with its own id is followed under that one.
 * The submission waits only for the outcome of a first socket connection
 * still under way (at most a second), never for a socket that failed.
 * `clock` is for tests.
 */
export function runJob(jobs: JobBackend, socket: FollowSocket, workflow: Workflow, opts: RunOptions = {}, clock: Clock = realClock): Promise<JobResult> {
  const follower = new JobFollower(jobs, socket, opts.promptId ?? randomUuid(), { ...opts, stopOnAbort: opts.stopOnAbort ?? true }, clock, true);
  return follower.submit(workflow);
}

/**
 * Follows an existing job to its end over the shared socket, polling while
 * it is down. See `CloudClient.follow`. `clock` is for tests.
 */
export function followJob(jobs: JobBackend, socket: FollowSocket, promptId: string, opts: RunOptions = {}, clock: Clock = realClock): Promise<JobResult> {
  return new JobFollower(jobs, socket, promptId, opts, clock, false).attach();
}
