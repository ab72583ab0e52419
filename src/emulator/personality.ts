/**
 * Personalities of the emulated cloud service: which real server it imitates.
 * A personality is data (what differs between the servers), never code: the
 * route handlers (`cloud-routes.ts`), the job engine (`cloud-jobs.ts`), the
 * record renderers (`cloud-records.ts`) and the socket layer (`ws.ts`) each
 * read the few fields that concern them.
 *
 * - `cloud` (the default): the live cloud service as it answers beyond the
 *   documents (DESIGN §8): raw job states, `/api/jobs`, late outputs, no
 *   `executed` for cached runs, its own queue tuples, account-wide interrupt.
 *   The default because it is what users' code meets, and it serves every
 *   route the README shows.
 * - `spec`: exactly what `cloud.md` documents, with the emulator's choices
 *   where it is silent (no `/api/jobs`, no atomic cancel): by name only.
 * - `local`: a self-hosted local server (`fixtures/local-server`): no API key,
 *   one shared queue running one job at a time, `/history`, `/api/jobs` in its
 *   own shape, routes also without `/api`, events only to the submitting
 *   client's socket, `/view` answering 200.
 * - `v2`: Comfy API v2 as its published spec describes it (`spec/cloud-v2.md`
 *   §1–§5), on `/api/v2/*` with `Authorization: Bearer <key>`: the v1 routes
 *   are not served (but `GET /api/object_info`, for clients that validate).
 * - `v2-real`: Comfy API v2 as the real local server answers
 *   (comfy-api-proxy on ComfyUI 0.8.0, §9.7): no key, one job at a time.
 *
 * @module
 */
import { V2_REAL, V2_SPEC, type V2Behaviour } from './v2/behaviour.ts';

/** Name of a built-in personality. */
export type PersonalityName = 'spec' | 'cloud' | 'local' | 'v2' | 'v2-real';

/**
 * What one emulated server does differently. Build a variant by spreading a
 * built-in one, e.g. `{ ...PERSONALITIES.local, jobsApi: false }` for a local
 * server older than `/api/jobs`.
 */
export interface Personality {
  /** The built-in personality this one is (or derives from). */
  readonly name: PersonalityName;
  /**
   * Whether REST calls need `X-API-Key` and the socket a `token`. When false
   * (local) a given key is ignored and every client shares one queue, the
   * lane {@link LOCAL_LANE}.
   */
  readonly requireKey: boolean;
  /**
   * `GET /api/job/{id}/status`: `'spec'` answers `{ status, outputs?, error? }`
   * with the spec's five values; `'raw'` the live cloud's internal states
   * (`submitted`, `queued_limited`, `preparing`, `executing`, `success`,
   * `error`, `non_retryable_error`, `lost`, `cancelled`) with times and no
   * outputs; `false` makes it absent (404, `text/plain` `404: Not Found`).
   */
  readonly statusEndpoint: 'spec' | 'raw' | false;
  /**
   * `GET /api/jobs` and `GET /api/jobs/{id}`, in the shape of the live cloud
   * (`'cloud'`: times in Unix seconds, a `cancelled` status, `limit` 1–1000)
   * or of the local server (`'local'`: times in Unix milliseconds, `priority`,
   * no `cancelled`); `false`: absent.
   */
  readonly jobsApi: 'cloud' | 'local' | false;
  /** `GET /api/history/{id}` and `GET /history/{id}`, the local server's history entries (`{}` until a job has finished). */
  readonly history: boolean;
  /** `GET /api/view`: 302 to a signed URL (`redirect`) or 200 with the file (`direct`). The initial `CloudState.viewMode`. */
  readonly viewMode: 'redirect' | 'direct';
  /**
   * Entries of `GET /api/queue`: `'local'` `[number, prompt_id, prompt,
   * extra_data, outputs_to_execute]`; `'cloud'` `[number, prompt_id, workflow,
   * output_node_ids, { create_time }]` (`create_time` in Unix seconds).
   */
  readonly queueTuple: 'local' | 'cloud';
  /**
   * `POST /api/interrupt`: `'by-prompt'` honours an optional `{ prompt_id }`
   * (it stops that prompt only if it is running; no id stops whatever runs);
   * `'all'` ignores the body and stops every running job of the key.
   */
  readonly interrupt: 'by-prompt' | 'all';
  /**
   * `POST /api/queue { delete }`: true cancels pending and running jobs (each
   * gets `execution_interrupted`); false removes pending jobs only, silently
   * and without a trace (no event, no history, no job record), like the local
   * server, and leaves a running one untouched. `clear` follows the same rule.
   */
  readonly deleteRunning: boolean;
  /**
   * `'json'`: `POST /api/queue` answers `{ deleted }` and `POST /api/interrupt`
   * `{}`; `'empty'`: both answer 200 with an empty body (the local server).
   */
  readonly controlReplies: 'json' | 'empty';
  /**
   * Who receives a job's execution events: `'key'` every socket of the key;
   * `'client_id'` only the sockets whose `clientId` is the submission's
   * `client_id` (every socket when it had none). `status` messages and type-3
   * text frames go to every socket of the lane either way.
   */
  readonly events: 'key' | 'client_id';
  /** Whether a fully cached rerun sends `executed` (and `progress_state`) for its output nodes. */
  readonly cachedExecuted: boolean;
  /**
   * A finished job's outputs appear in its REST answers (records, history,
   * status) this long after its end; until then they read `{}`. The initial
   * `CloudState.outputsDelayMs`.
   */
  readonly outputsDelayMs: number;
  /** Every `/api/x` route is also served as `/x`. */
  readonly bareRoutes: boolean;
  /** Jobs running at once in a lane that is no configured key (the shared lane when keys are not required). Default: `CloudState.parallel`. */
  readonly parallel?: number;
  /**
   * Whether `POST /api/prompt` uses a `prompt_id` the client sends (the local
   * server does: `json_data.get("prompt_id", uuid4())`) instead of choosing
   * its own. `spec`: false (the documents show no such field); `cloud`: true
   * (as the official frontend relies on; unverified against the live service:
   * the SDK detects either); `local`: true.
   */
  readonly chosenIds: boolean;
  /**
   * The atomic cancel of newer servers (after the local kit 0.8.0; the
   * cloud's frontend uses it): `POST /api/jobs/{id}/cancel` stops that job
   * wherever it is (200 for a finished or unknown one), and
   * `POST /api/jobs/cancel { job_ids }` a batch (any unknown id: 404, nothing
   * cancelled). `local` has it by default; `{ ...PERSONALITIES.local,
   * atomicCancel: false }` is the real 0.8.0 kit.
   */
  readonly atomicCancel: boolean;
  /**
   * A Comfy API v2 server (`/api/v2/*`) instead of the v1 routes, behaving
   * as this says (`v2/behaviour.ts`: the spec's {@link V2_SPEC} or the real
   * server's {@link V2_REAL}). Absent for the v1 personalities.
   */
  readonly v2?: V2Behaviour;
}

/** The one lane (queue, cache, sockets) every client shares when the personality requires no key. */
export const LOCAL_LANE = 'local';

const SPEC: Personality = Object.freeze({
  name: 'spec',
  requireKey: true,
  statusEndpoint: 'spec',
  jobsApi: false,
  history: false,
  viewMode: 'redirect',
  queueTuple: 'local',
  interrupt: 'by-prompt',
  deleteRunning: true,
  controlReplies: 'json',
  events: 'key',
  cachedExecuted: true,
  outputsDelayMs: 0,
  bareRoutes: false,
  chosenIds: false,
  atomicCancel: false,
});

const CLOUD: Personality = Object.freeze({
  name: 'cloud',
  requireKey: true,
  statusEndpoint: 'raw',
  jobsApi: 'cloud',
  history: false,
  viewMode: 'redirect',
  queueTuple: 'cloud',
  interrupt: 'all',
  deleteRunning: true,
  controlReplies: 'json',
  events: 'key',
  cachedExecuted: false,
  outputsDelayMs: 150,
  bareRoutes: false,
  chosenIds: true,
  atomicCancel: true,
});

const LOCAL: Personality = Object.freeze({
  name: 'local',
  requireKey: false,
  statusEndpoint: false,
  jobsApi: 'local',
  history: true,
  viewMode: 'direct',
  queueTuple: 'local',
  interrupt: 'by-prompt',
  deleteRunning: false,
  controlReplies: 'empty',
  events: 'client_id',
  cachedExecuted: true,
  outputsDelayMs: 0,
  bareRoutes: true,
  parallel: 1,
  chosenIds: true,
  atomicCancel: true,
});

// The v1 members of the v2 personalities only tune the shared job engine and key checks.
const V2: Personality = Object.freeze({ ...SPEC, name: 'v2', v2: V2_SPEC });
const V2_REAL_PERSONALITY: Personality = Object.freeze({ ...SPEC, name: 'v2-real', requireKey: false, parallel: 1, v2: V2_REAL });

/** The built-in personalities. */
export const PERSONALITIES: Readonly<Record<PersonalityName, Personality>> = Object.freeze({ cloud: CLOUD, spec: SPEC, local: LOCAL, v2: V2, 'v2-real': V2_REAL_PERSONALITY });

/** The built-in names for messages, the default first: `cloud, spec, local, v2 or v2-real`. */
export const PERSONALITY_CHOICES = Object.keys(PERSONALITIES).join(', ').replace(/, (?=[^,]*$)/, ' or ');

/** Whether `name` names a built-in personality. */
export function isPersonalityName(name: string): name is PersonalityName {
  return Object.hasOwn(PERSONALITIES, name);
}

/** A name or object → a frozen personality; default `cloud`. Throws on an unknown name. */
export function resolvePersonality(personality: PersonalityName | Personality | undefined): Personality {
  if (personality === undefined) return CLOUD;
  if (typeof personality === 'string') {
    if (!isPersonalityName(personality)) throw new Error(`Unknown personality: ${String(personality)} (${PERSONALITY_CHOICES})`);
    return PERSONALITIES[personality];
  }
  return Object.isFrozen(personality) ? personality : Object.freeze({ ...personality });
}
