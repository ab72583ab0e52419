// runJob over a stand-in socket and a scripted JobBackend: which ending wins, when the
// job record is read for outputs, and that nothing is left behind.
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutionError, RateLimitError, ResponseValidationError, type JobBackend, type JobRecord, type JobStatusResult } from '../../src/index.ts';
import { CloudSocket } from '../../src/cloud/socket.ts';
import { runJob } from '../../src/cloud/run.ts';
import { realClock, type Clock } from '../../src/cloud/follow/clock.ts';
import { FakeSocket } from '../helpers/fake-socket.ts';

const file = (name: string) => ({ images: [{ filename: name, subfolder: '', type: 'output' }] });
const sockets: CloudSocket[] = [];
afterEach(() => {
  sockets.splice(0).forEach((s) => s.close());
  FakeSocket.all = [];
});

async function openSocket() {
  const socket = new CloudSocket({ baseUrl: 'https://cloud.test', credential: async () => 'k', hasCredential: true }, { WebSocket: FakeSocket as never });
  sockets.push(socket);
  await socket.ready();
  return { socket, ws: FakeSocket.all.at(-1)! };
}

/** A backend whose status and record answers the test scripts; it logs every call. */
function backend(script: { status: () => Partial<JobStatusResult>; record?: () => Partial<JobRecord> }) {
  const calls: string[] = [];
  const jobs: JobBackend = {
    submit: async () => (calls.push('submit'), { prompt_id: 'p1' }),
    getJobStatus: async () => (calls.push('status'), { phase: 'running', status: 'executing', ...script.status() } as JobStatusResult),
    getJob: async () => (calls.push('record'), { id: 'p1', status: 'completed', phase: 'completed', ...script.record?.() } as JobRecord),
    stopJob: async () => void calls.push('stop'),
  };
  return { jobs, calls };
}

describe('runJob endings', () => {
  it('an ending found by a status poll reads the record, even when the socket heard some outputs', async () => {
    const { socket, ws } = await openSocket();
    let done = false;
    const { jobs, calls } = backend({ status: () => (done ? { status: 'success', phase: 'completed' } : {}), record: () => ({ outputs: { a: file('a.png'), b: file('b.png') } }) });
    const before = socket.listenerCount;
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 5 });
    await new Promise((r) => setTimeout(r, 10));
    ws.push({ type: 'executed', data: { prompt_id: 'p1', node: 'a', output: file('a.png') } });
    done = true; // the job ended; the socket has not said so (nor sent node b) yet
    const result = await run;
    expect(result.files.map((f) => f.filename)).toEqual(['a.png', 'b.png']);
    expect(calls).toContain('record');
    expect(socket.listenerCount).toBe(before);
  });

  it('trusts the socket when it heard the whole job and said it ended', async () => {
    const { socket, ws } = await openSocket();
    const { jobs, calls } = backend({ status: () => ({}) });
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 1000 });
    await new Promise((r) => setTimeout(r, 5));
    ws.push({ type: 'execution_start', data: { prompt_id: 'p1' } });
    ws.push({ type: 'execution_cached', data: { prompt_id: 'p1', nodes: [] } });
    ws.push({ type: 'executed', data: { prompt_id: 'p1', node: 'a', output: file('a.png') } });
    ws.push({ type: 'execution_success', data: { prompt_id: 'p1' } });
    expect((await run).files.map((f) => f.filename)).toEqual(['a.png']);
    expect(calls).toEqual(['submit']);
  });

  it('reads the record when the socket missed the start of the job', async () => {
    const { socket, ws } = await openSocket();
    const { jobs, calls } = backend({ status: () => ({}), record: () => ({ outputs: { a: file('a.png'), b: file('b.png') } }) });
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 1000 });
    await new Promise((r) => setTimeout(r, 5));
    // No execution_start: the job began before this socket could hear it (a local server sends it only to a connected socket).
    ws.push({ type: 'executed', data: { prompt_id: 'p1', node: 'b', output: file('b.png') } });
    ws.push({ type: 'execution_success', data: { prompt_id: 'p1' } });
    expect((await run).files).toHaveLength(2);
    expect(calls).toEqual(['submit', 'record']);
  });

  it('reads the record when the socket dropped before the job ended', async () => {
    const { socket, ws } = await openSocket();
    const { jobs, calls } = backend({ status: () => ({}), record: () => ({ outputs: { a: file('a.png'), b: file('b.png') } }) });
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 1000 });
    await new Promise((r) => setTimeout(r, 5));
    ws.push({ type: 'executed', data: { prompt_id: 'p1', node: 'a', output: file('a.png') } });
    ws.drop();
    await socket.ready();
    FakeSocket.all.at(-1)!.push({ type: 'execution_success', data: { prompt_id: 'p1' } });
    expect((await run).files).toHaveLength(2);
    expect(calls).toContain('record');
  });

  it('ends on an off-spec status answer instead of polling forever', async () => {
    const { socket } = await openSocket();
    const bad = new ResponseValidationError('GET', 'https://cloud.test/api/job/p1/status', [], {});
    const jobs: JobBackend = {
      submit: async () => ({ prompt_id: 'p1' }),
      getJobStatus: async () => {
        throw bad;
      },
      getJob: async () => ({}) as JobRecord,
      stopJob: async () => undefined,
    };
    await expect(runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 2 })).rejects.toBe(bad);
  });

  it('a failed status rejects with the record error, and a huge pollInterval does not poll in a loop', async () => {
    const { socket } = await openSocket();
    let polls = 0;
    const { jobs } = backend({
      status: () => (polls++, { status: 'lost', phase: 'failed', error_message: 'worker lost' }),
      record: () => ({ status: 'failed', phase: 'failed' }),
    });
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 2_000_000_000 });
    await new Promise((r) => setTimeout(r, 50));
    // The socket is open: the confirming poll waits its (clamped) interval instead of firing every millisecond.
    expect(polls).toBe(0);
    socket.close();
    const err = await run.catch((e) => e);
    expect(err).toBeInstanceOf(ExecutionError);
    expect(err.exceptionMessage).toBe('worker lost');
  });

  it('submits at once when the socket is refused', async () => {
    class Refused {
      constructor() {
        throw new Error('refused by the test');
      }
    }
    const socket = new CloudSocket({ baseUrl: 'https://cloud.test', credential: async () => 'k', hasCredential: true }, { WebSocket: Refused as never, reconnect: { baseDelay: 60_000 } });
    sockets.push(socket);
    const { jobs, calls } = backend({ status: () => ({ status: 'success', phase: 'completed', outputs: { a: file('a.png') } }) });
    // At once, without a clock: the follower's timers (its wait for a first connection among them) that had fired when it submitted.
    const fired: number[] = [];
    const clock: Clock = { ...realClock, setTimeout: (fn, ms) => realClock.setTimeout(() => (fired.push(ms), fn()), ms) };
    let firedAtSubmit: number[] | undefined;
    const submit = jobs.submit;
    jobs.submit = (...args) => ((firedAtSubmit = [...fired]), submit(...args));
    const result = await runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 5 }, clock);
    expect(firedAtSubmit).toEqual([]);
    expect(calls.slice(0, 2)).toEqual(['submit', 'status']);
    expect(result.files).toHaveLength(1);
  });

  it('waits at most a second for a first connection that neither opens nor fails', async () => {
    // Connects forever: never opens, never fails.
    class NeverOpens {
      binaryType = 'blob';
      readyState = 0;
      onopen = null;
      onmessage = null;
      onclose = null;
      onerror = null;
      send(): void {}
      close(): void {
        this.readyState = 3;
      }
    }
    const socket = new CloudSocket({ baseUrl: 'https://cloud.test', credential: async () => 'k', hasCredential: true }, { WebSocket: NeverOpens as never });
    sockets.push(socket);
    const { jobs, calls } = backend({ status: () => ({ status: 'success', phase: 'completed', outputs: { a: file('a.png') } }) });
    const submitted: string[] = [];
    const result = await runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 5, onSubmitted: (id) => void submitted.push(id) });
    expect(socket.state).not.toBe('open');
    expect(submitted).toEqual(['p1']);
    expect(calls.slice(0, 2)).toEqual(['submit', 'status']);
    expect(result.files.map((f) => f.filename)).toEqual(['a.png']);
  }, 3000);

  it('a throwing onSubmitted rejects the run and stops the job', async () => {
    const { socket } = await openSocket();
    const { jobs, calls } = backend({ status: () => ({}) });
    const boom = new Error('could not record the id');
    await expect(
      runJob(jobs, socket, { '1': { inputs: {} } }, {
        onSubmitted: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    await new Promise((r) => setTimeout(r, 5));
    expect(calls).toEqual(['submit', 'stop']);
    expect(socket.listenerCount).toBe(0);
  });

  it('an onSubmitted that rejects rejects the run and stops the job, with no unhandled rejection', async () => {
    const { socket } = await openSocket();
    const { jobs, calls } = backend({ status: () => ({}) });
    const saveFailed = new Error('db down');
    await expect(runJob(jobs, socket, { '1': { inputs: {} } }, { onSubmitted: async () => Promise.reject(saveFailed) })).rejects.toBe(saveFailed);
    await new Promise((r) => setTimeout(r, 5));
    expect(calls).toEqual(['submit', 'stop']);
  });

  it('reads the record when the socket could not hold every early event', async () => {
    const { socket, ws } = await openSocket();
    // The job runs before anyone follows it: its events are held, more than the hold keeps.
    ws.push({ type: 'execution_start', data: { prompt_id: 'p1' } });
    ws.push({ type: 'executed', data: { prompt_id: 'p1', node: 'a', output: file('a.png') } });
    for (let i = 0; i < 2100; i++) ws.push({ type: 'progress', data: { prompt_id: 'p1', value: i, max: 2100, node: 'b' } });
    ws.push({ type: 'executed', data: { prompt_id: 'p1', node: 'b', output: file('b.png') } });
    const { jobs, calls } = backend({ status: () => ({}), record: () => ({ outputs: { a: file('a.png'), b: file('b.png') } }) });
    const { followJob } = await import('../../src/cloud/run.ts');
    const following = followJob(jobs, socket, 'p1', { pollInterval: 1000 });
    ws.push({ type: 'execution_success', data: { prompt_id: 'p1' } });
    expect((await following).files.map((f) => f.filename)).toEqual(['a.png', 'b.png']);
    expect(calls).toContain('record');
  });
});

describe('runJob with job ids chosen before the request (issue 23)', () => {
  it('subscribes under the chosen id before submitting and sends it: events that beat the answer are the job\'s, and onSubmitted gets that id', async () => {
    const { socket, ws } = await openSocket();
    const sent: Array<{ promptId?: string; confirmWithin?: number }> = [];
    const jobs: JobBackend = {
      // A server that honours chosen ids, and runs the job before its answer arrives.
      submit: async (_w, options) => {
        sent.push(options);
        ws.push({ type: 'execution_start', data: { prompt_id: options.promptId } });
        ws.push({ type: 'executed', data: { prompt_id: options.promptId, node: '9', output: file('a.png') } });
        ws.push({ type: 'execution_success', data: { prompt_id: options.promptId } });
        return { prompt_id: options.promptId! };
      },
      getJobStatus: async () => Promise.reject(new Error('not polled')),
      getJob: async () => Promise.reject(new Error('not read')),
      stopJob: async () => undefined,
    };
    const submitted: string[] = [];
    const result = await runJob(jobs, socket, { '9': { inputs: {} } }, { promptId: 'my-id', confirmWithin: 2000, onSubmitted: (id) => void submitted.push(id) });
    expect(sent).toMatchObject([{ promptId: 'my-id', confirmWithin: 2000, clientId: socket.clientId }]);
    expect(submitted).toEqual(['my-id']);
    expect(result).toMatchObject({ promptId: 'my-id', files: [{ filename: 'a.png' }] });
    expect(socket.listenerCount).toBe(0);
  });

  it('a submission that rejects leaves no subscription behind', async () => {
    const { socket } = await openSocket();
    const lost = new Error('answer lost');
    const jobs: JobBackend = { submit: async () => Promise.reject(lost), getJobStatus: async () => ({}) as JobStatusResult, getJob: async () => ({}) as JobRecord, stopJob: async () => undefined };
    await expect(runJob(jobs, socket, { '9': { inputs: {} } }, { promptId: 'p-lost' })).rejects.toBe(lost);
    expect(socket.listenerCount).toBe(0);
  });
});

describe('runJob while the socket is down (issue 23)', () => {
  /** A socket that opens, then drops for good (its next attempt is a minute away). */
  async function socketThatDrops() {
    const socket = new CloudSocket({ baseUrl: 'https://cloud.test', credential: async () => 'k', hasCredential: true }, { WebSocket: FakeSocket as never, reconnect: { baseDelay: 60_000, maxDelay: 60_000 } });
    sockets.push(socket);
    await socket.ready();
    return { socket, drop: () => FakeSocket.all.at(-1)!.drop() };
  }

  it('finds an ending by polling at a short gap, not once per pollInterval', async () => {
    const { socket, drop } = await socketThatDrops();
    let polls = 0;
    // The job ends after the third poll; the socket, down, never says so.
    const { jobs } = backend({ status: () => (++polls > 3 ? { status: 'success', phase: 'completed', outputs: { a: file('a.png') } } : {}) });
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 60_000 });
    await new Promise((r) => setTimeout(r, 5));
    drop();
    expect((await run).files).toHaveLength(1);
    expect(polls).toBe(4);
  });

  it('a 429 answer to a poll is tried again, not the end of the run', async () => {
    const { socket, drop } = await socketThatDrops();
    let polls = 0;
    const busy = new RateLimitError({ status: 429, body: { error: 'slow down' }, method: 'GET', url: 'https://cloud.test/api/job/p1/status' } as never);
    const { jobs } = backend({ status: () => (++polls === 1 ? (() => { throw busy; })() : { status: 'success', phase: 'completed', outputs: { a: file('a.png') } }) });
    const run = runJob(jobs, socket, { '1': { inputs: {} } }, { pollInterval: 5 });
    await new Promise((r) => setTimeout(r, 5));
    drop();
    expect((await run).files).toHaveLength(1);
  });
});
