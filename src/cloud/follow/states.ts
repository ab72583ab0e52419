/**
 * The states of a job follower and the only moves between them. Pure: what
 * each state does on entry (poll, listen, read the record) is the reducer's
 * (`reducer.ts`), performed by the driver (`follower.ts`); this table says
 * only where an input leads.
 *
 * ```text
 *   from             input                    to
 *   submitting       accepted, socket open    live
 *   submitting       accepted, socket down    polling
 *   live             socket down              polling
 *   polling          socket open              live
 *   live, polling    ended                    settling
 *   settling         done                     settled
 *   submitting,
 *   live, polling    gave up                  settled
 * ```
 *
 * "ended": the job's end was heard or polled and its outputs or error are read
 * (`settling`). "gave up": the run ends without reading more (an abort, a
 * silence, a callback that threw, a lost server, a failed submission, an
 * error event).
 *
 * @module
 */

/**
 * - `submitting`: subscribed under the job's id, the submission not answered
 *   yet (a job followed later passes through it at once). Events wait.
 * - `live`: the socket is open and hears the job; a slow confirming poll.
 * - `polling`: the socket is down; the job's status is polled at a short gap.
 * - `settling`: the job ended; its record is being read (outputs, error).
 * - `settled`: resolved or rejected; nothing is listened to any more.
 */
export type FollowState = 'submitting' | 'live' | 'polling' | 'settling' | 'settled';

/** What can happen to a follower. */
export type FollowInput =
  /** The submission was answered (and `onSubmitted` returned), or a job followed later is attached. */
  | { type: 'accepted'; socketOpen: boolean }
  /** The socket opened (first time or again). */
  | { type: 'socket_open' }
  /** The socket dropped or closed. */
  | { type: 'socket_down' }
  /** The job's end was heard on the socket or found by a poll, and is to be read. */
  | { type: 'ended' }
  /** The run ends without reading anything more: an abort, a silence, a callback that threw, a lost server, a submission that failed, an ending whose error is known. */
  | { type: 'gave_up' }
  /** The ending was read: the run has its outcome. */
  | { type: 'done' };

type Target = FollowState | ((input: FollowInput) => FollowState);

/** Every move; an input a state does not list changes nothing there. */
export const TRANSITIONS: Readonly<Record<FollowState, Partial<Record<FollowInput['type'], Target>>>> = {
  submitting: { accepted: (i) => (i.type === 'accepted' && i.socketOpen ? 'live' : 'polling'), gave_up: 'settled' },
  live: { socket_down: 'polling', ended: 'settling', gave_up: 'settled' },
  polling: { socket_open: 'live', ended: 'settling', gave_up: 'settled' },
  settling: { done: 'settled' },
  settled: {},
};

/**
 * Where `input` leads from `state`, or `undefined` when it changes nothing
 * there (a socket that drops again while polling, anything once settled).
 *
 * @example
 * ```ts
 * nextState('live', { type: 'socket_down' }); // 'polling'
 * nextState('settled', { type: 'ended' }); // undefined
 * ```
 */
export function nextState(state: FollowState, input: FollowInput): FollowState | undefined {
  const target = TRANSITIONS[state][input.type];
  return typeof target === 'function' ? target(input) : target;
}

/** How a job's event ends it, if it does. */
export type JobEnd = 'completed' | 'failed' | 'cancelled';

/**
 * Whether a job event of this type ends the job, and how: the one reading of
 * the socket's endings, for the follower (`ended` / `gave_up`) and for the
 * command line's display. An off-spec ending (`invalid`) is read by its `rawType`.
 *
 * @example
 * ```ts
 * jobEndOf('execution_success'); // 'completed'
 * jobEndOf('progress'); // undefined
 * ```
 */
export function jobEndOf(type: string): JobEnd | undefined {
  if (type === 'execution_success') return 'completed';
  if (type === 'execution_error') return 'failed';
  return type === 'execution_interrupted' ? 'cancelled' : undefined;
}
