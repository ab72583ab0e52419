/**
 * Routing at add(): the lanes that can run a workflow, judged as the pool
 * judges its servers (`judge`: classes and combo values; the editor's format
 * converted with each lane's `object_info`), and the one it goes to.
 *
 * @module
 */
import { PlacementError } from '@platformui/sdk';
import type { EditorWorkflowJSON } from '@platformui/sdk';
import { judge, loadJudging } from '../cloud/pool/placement.ts';
import type { WorkflowJSON as Workflow } from '@platformui/sdk';
import type { Lanes } from './lanes.ts';

/** A capable lane, with its waiting jobs. */
export interface Candidate {
  id: string;
  waiting: number;
}

/**
 * The live lanes that can run `workflow` (with its `uploaded` input paths),
 * or the PlacementError naming why each cannot.
 */
export async function capableLanes(lanes: Lanes, workflow: Workflow | EditorWorkflowJSON, uploaded: ReadonlySet<string>, queueName: string): Promise<string[] | PlacementError> {
  const live = await lanes.live();
  if (live.length === 0) return new PlacementError({ [queueName]: ['no worker of this queue is running'] }, 'No worker can run this workflow');
  await loadJudging(workflow); // the validator, and for the editor's format the converter: judge() needs them loaded
  const reasons: Record<string, string[]> = {};
  const able: string[] = [];
  for (const lane of live) {
    const info = await lanes.info(lane.id);
    if (!info) continue;
    const why = judge({ workflow, uploaded, converted: new Map(), options: {} }, lane.id, info);
    if (why!.length === 0) able.push(lane.id);
    else reasons[`lane ${lane.id}`] = why!;
  }
  return able.length > 0 ? able : new PlacementError(reasons, 'No worker can run this workflow');
}

/** The candidate with the fewest waiting jobs; the first of equals. */
export const leastWaiting = (cs: readonly Candidate[]): Candidate => cs.reduce((best, c) => (c.waiting < best.waiting ? c : best));
