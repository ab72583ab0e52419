// The pool's decision that costs money (issue 23): may a job that failed on its server go to
// another? One pure function, read as a table: each row the facts that differ from `base`
// (a fresh job whose submission failed, the pool's defaults, another server able), and what
// becomes of the job.
import { describe, expect, it } from 'vitest';
import { decideAfterFailure, MAX_MOVES, type AfterFailure, type FailureFacts } from '../../../src/cloud/pool/move.ts';

const base: FailureFacts = { stage: 'submit', sent: undefined, lost: undefined, resubmitOnServerLoss: false, moves: 0, resubmitted: false, ended: false, elsewhere: true };

const table: Array<[why: string, facts: Partial<FailureFacts>, expected: AfterFailure]> = [
  // Uploads never create a job: any failure moves (bounded), never counted as a submission.
  ['upload refused (no answer)', { stage: 'upload', sent: 'no' }, 'move'],
  ['upload reset, or a connection error without a code (no answer)', { stage: 'upload', sent: 'maybe' }, 'move'],
  ['upload answered 503 (or any error), another server able', { stage: 'upload' }, 'move'],
  ['upload answered 503, no other server: it would answer the same', { stage: 'upload', elsewhere: false }, 'reject'],
  ['upload refused, no other server: it is down and may come back', { stage: 'upload', sent: 'no', elsewhere: false }, 'move'],
  ['upload failed, resubmitOnServerLoss does not matter', { stage: 'upload', resubmitOnServerLoss: true }, 'move'],
  ['upload failed after a re-run: still no job here', { stage: 'upload', resubmitted: true }, 'move'],
  [`upload failed, ${MAX_MOVES} moves already`, { stage: 'upload', moves: MAX_MOVES }, 'reject'],
  [`upload failed, ${MAX_MOVES - 1} moves so far`, { stage: 'upload', moves: MAX_MOVES - 1 }, 'move'],
  // A submission moves only when it provably never left.
  ['submission refused, DNS or no route (sent: no)', { sent: 'no' }, 'move'],
  ['submission never left, no other server able yet: waits for one', { sent: 'no', elsewhere: false }, 'move'],
  ['submission never left, already re-run once', { sent: 'no', resubmitted: true }, 'move'],
  [`submission never left, ${MAX_MOVES} moves already`, { sent: 'no', moves: MAX_MOVES }, 'reject'],
  // Its answer lost (timeout, reset, not found by its id): the job may exist there.
  ['submission’s answer lost (sent: maybe)', { sent: 'maybe' }, 'reject'],
  ['answer lost, resubmitOnServerLoss', { sent: 'maybe', resubmitOnServerLoss: true }, 'rerun'],
  ['answer lost, resubmitOnServerLoss, already re-run once', { sent: 'maybe', resubmitOnServerLoss: true, resubmitted: true }, 'reject'],
  ['answer lost, resubmitOnServerLoss, nowhere else to run it', { sent: 'maybe', resubmitOnServerLoss: true, elsewhere: false }, 'reject'],
  [`answer lost, resubmitOnServerLoss, ${MAX_MOVES} moves already`, { sent: 'maybe', resubmitOnServerLoss: true, moves: MAX_MOVES }, 'reject'],
  // The server answered the submission with an error (rejected workflow, credits, 5xx): not moved.
  ['submission answered with an error', {}, 'reject'],
  ['submission answered with an error, resubmitOnServerLoss', { resubmitOnServerLoss: true }, 'reject'],
  // Accepted (its id confirmed): never moved; re-run only when lost, and only when asked.
  ['accepted, then lost: no answer for serverLostAfter', { stage: 'accepted', lost: 'unreachable' }, 'reject'],
  ['accepted, then lost: the server forgot it (restarted)', { stage: 'accepted', lost: 'forgotten' }, 'reject'],
  ['accepted, lost (unreachable), resubmitOnServerLoss', { stage: 'accepted', lost: 'unreachable', resubmitOnServerLoss: true }, 'rerun'],
  ['accepted, lost (forgotten), resubmitOnServerLoss', { stage: 'accepted', lost: 'forgotten', resubmitOnServerLoss: true }, 'rerun'],
  ['accepted, lost, resubmitOnServerLoss, already re-run once', { stage: 'accepted', lost: 'unreachable', resubmitOnServerLoss: true, resubmitted: true }, 'reject'],
  ['accepted, lost, resubmitOnServerLoss, nowhere else', { stage: 'accepted', lost: 'unreachable', resubmitOnServerLoss: true, elsewhere: false }, 'reject'],
  ['accepted, then a connection error that proves nothing (sent: no)', { stage: 'accepted', sent: 'no' }, 'reject'],
  ['accepted, then a connection error, resubmitOnServerLoss', { stage: 'accepted', sent: 'maybe', resubmitOnServerLoss: true }, 'reject'],
  ['accepted, then failed (execution error, silence, a callback threw)', { stage: 'accepted', resubmitOnServerLoss: true }, 'reject'],
  // Cancelled by the caller, or the pool closes: nothing more is started.
  ['cancelled while uploading', { stage: 'upload', sent: 'no', ended: true }, 'reject'],
  ['cancelled, its submission refused', { sent: 'no', ended: true }, 'reject'],
  ['closing, lost, resubmitOnServerLoss', { stage: 'accepted', lost: 'unreachable', resubmitOnServerLoss: true, ended: true }, 'reject'],
];

describe('decideAfterFailure: may a failed job move to another server?', () => {
  it.each(table)('%s → %s', (_why, facts, expected) => {
    expect(decideAfterFailure({ ...base, ...facts })).toBe(expected);
  });

  it('a job runs again elsewhere only where it may exist and the caller asked: every combination of the facts', () => {
    // Over all of them: `rerun` needs resubmitOnServerLoss, and `move` never happens where the job may exist.
    const stages = ['upload', 'submit', 'accepted'] as const;
    for (const stage of stages)
      for (const sent of ['no', 'maybe', undefined] as const)
        for (const lost of ['unreachable', 'forgotten', undefined] as const)
          for (const resubmitOnServerLoss of [false, true])
            for (const moves of [0, MAX_MOVES])
              for (const resubmitted of [false, true])
                for (const ended of [false, true])
                  for (const elsewhere of [false, true]) {
                    const f: FailureFacts = { stage, sent, lost, resubmitOnServerLoss, moves, resubmitted, ended, elsewhere };
                    const d = decideAfterFailure(f);
                    const noJobThere = stage === 'upload' || (stage === 'submit' && sent === 'no');
                    if (d === 'move') expect(noJobThere, JSON.stringify(f)).toBe(true);
                    if (d === 'rerun') expect(resubmitOnServerLoss && !resubmitted && elsewhere && !noJobThere, JSON.stringify(f)).toBe(true);
                    if (ended || moves >= MAX_MOVES) expect(d, JSON.stringify(f)).toBe('reject');
                  }
  });
});
