/**
 * What a queue worker's server runs: its `object_info`, which makes its lane.
 *
 * @module
 */
import { NotFoundError, UnsupportedError, type CloudClient } from '@platformui/sdk';
import type { LaneInfo } from './lanes.ts';

/** The job id a Comfy API v2 server is asked about to see it answer (it serves no object_info): a 404 is an answer. */
const PROBE_JOB_ID = '00000000-0000-0000-0000-000000000000';

/**
 * A server's nodes: its `object_info`, or `'unknown'` for a Comfy API v2 server without the `objectInfo` option
 * (nobody can read them: it takes API-format workflows, placed by load), once it answers a job read.
 */
export async function nodesOf(client: CloudClient): Promise<LaneInfo> {
  try {
    return await client.getObjectInfo();
  } catch (err) {
    if (!(err instanceof UnsupportedError)) throw err;
  }
  await Promise.resolve(client.getJobStatus(PROBE_JOB_ID)).catch((err: unknown) => {
    if (!(err instanceof NotFoundError)) throw err;
  });
  return 'unknown';
}
