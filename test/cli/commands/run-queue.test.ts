// `platformui run --queue`: no follower runs in the command's process (a worker runs the job), so the
// display reads the job's end from the queue's node events, made into the socket messages they were
// (`socketEventOf`), by the follower's rule of which event ends a job. The whole command against Redis:
// test/cli/commands/queue-redis.int.test.ts.
import { describe, expect, it } from 'vitest';
import { socketEventOf } from '../../../src/cli/commands/run-queue.ts';
import { createDisplay } from '../../../src/cli/display.ts';
import type { QueueNodeEvent } from '../../../src/queue/index.ts';

const NODES = { '1': { classType: 'LoadImage' }, '2': { classType: 'SaveImage' } };

/** The lines a plain display (as `run --queue` opens it) prints for these node events of job q1. */
function plain(events: QueueNodeEvent[]): string[] {
  let text = '';
  const d = createDisplay({ mode: 'plain', out: { write: (s: string) => void (text += s) }, color: false, nodes: NODES, now: () => 0 });
  d.submitted('q1');
  for (const e of events) d.event(socketEventOf(e, 'q1'));
  return text.trimEnd().split('\n').slice(1);
}

describe("run --queue: the display ends on the queue's events", () => {
  it('execution_success ends the job', () => {
    expect(plain([{ type: 'execution_start' }, { type: 'executing', node: '1' }, { type: 'executing', node: '2' }, { type: 'execution_success' }])).toEqual([
      'Job started',
      'Running LoadImage (#1)',
      'Running SaveImage (#2)',
      'Job completed in 0.0s',
    ]);
  });

  it('a failure or a cancellation ends it where the worker said', () => {
    expect(plain([{ type: 'executing', node: '1' }, { type: 'execution_error', node: '1' }])).toEqual(['Running LoadImage (#1)', 'Job failed at LoadImage (#1)']);
    expect(plain([{ type: 'executing', node: '2' }, { type: 'execution_interrupted', node: '2' }])).toEqual(['Running SaveImage (#2)', 'Job cancelled at SaveImage (#2)']);
  });
});
