// A server process for the process tests: an emulator of the local personality (one job at a time, like a
// real local server) holding in.png, with QUEUE_PROC = { stepMs, progressSteps, holdUploads? }. Prints
// `url <url>` once it listens. Its own process, so it runs on when a worker is SIGKILLed, as a real server would.
// Over Node IPC it answers { id, op } with { id, value } (or { id, error }):
//   'jobs'    → the jobs it holds, as ServerJob (enough to tell each job apart and check its state);
//   'posts'   → every POST /api/prompt it received, per the prompt_id it carried, as [id, count] pairs;
//   'uploads' → how many uploads it received (read and stored; with holdUploads, their answers maybe held);
//   'release' → sends the held upload answers and holds none from then on;
//   'close'   → closes the emulator, answers, and exits.
import { makePng, startEmulator, type Job } from '../../../src/emulator/index.ts';

/** A job as the server holds it, as much as the tests read of it (a Job also holds its AbortController, which does not cross IPC). */
export type ServerJob = Pick<Job, 'prompt_id' | 'status' | 'prompt'>;
/** What the test process asks, over IPC. */
export interface ServerRequest { id: number; op: 'jobs' | 'posts' | 'uploads' | 'release' | 'close' }
/** What the server answers: `value` per op (ServerJob[], [prompt id, count][], number, null, null), or what went wrong. */
export type ServerReply = { id: number; value: unknown } | { id: number; error: string };
/** How the server is started (QUEUE_PROC). */
export interface ServerConfig { stepMs: number; progressSteps: number; holdUploads?: boolean }

const { stepMs, progressSteps, holdUploads = false } = JSON.parse(process.env.QUEUE_PROC ?? '{}') as ServerConfig;
const emu = await startEmulator({ personality: 'local', cloud: { stepMs, progressSteps }, logLevel: 'off' });
emu.cloud.addFile('in.png', makePng(8, 8, 26));

// Counted from the server's own handler, before it judges the body: a second POST of one id counts here
// even if the server refused it. Wrapped before the URL is printed, so no POST goes uncounted.
const posts = new Map<string, number>();
const submit = emu.cloud.submit.bind(emu.cloud);
emu.cloud.submit = (key, body) => {
  const id = (body as { prompt_id?: unknown } | undefined)?.prompt_id;
  const k = typeof id === 'string' ? id : '(no prompt_id)';
  posts.set(k, (posts.get(k) ?? 0) + 1);
  return submit(key, body);
};

// With holdUploads, an upload is read and stored at once but its answer waits for 'release': the worker that
// sent it is still waiting for it (it has not gone on to submit) when the test learns it arrived ('uploads').
let uploads = 0;
let holding = holdUploads;
const held: Array<() => void> = [];
emu.server.prependListener('request', (req, res) => {
  if (req.method !== 'POST' || !/\/upload\/(image|mask)$/.test(new URL(req.url ?? '/', 'http://x').pathname)) return;
  const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
  res.end = ((...args: unknown[]) => {
    uploads++;
    if (!holding) return end(...args);
    held.push(() => end(...args));
    return res;
  }) as typeof res.end;
});

const reply = (message: ServerReply, then?: () => void) => process.send!(message, undefined, {}, () => then?.());
process.on('message', (message: ServerRequest) => {
  const { id, op } = message;
  if (op === 'jobs') {
    const jobs: ServerJob[] = [...emu.cloud.engine.jobs.values()].map((j) => ({ prompt_id: j.prompt_id, status: j.status, prompt: j.prompt }));
    reply({ id, value: jobs });
  } else if (op === 'posts') {
    reply({ id, value: [...posts] });
  } else if (op === 'uploads') {
    reply({ id, value: uploads });
  } else if (op === 'release') {
    holding = false;
    for (const send of held.splice(0)) send();
    reply({ id, value: null });
  } else if (op === 'close') {
    // Exits once the answer is sent: an exit right after send() could drop it.
    void emu.close().then(() => reply({ id, value: null }, () => process.exit(0)));
  } else {
    reply({ id, error: `unknown op ${String(op)}` });
  }
});
// The test process gone (its IPC channel closed): no server outlives it.
process.on('disconnect', () => process.exit(0));
process.stdout.write(`url ${emu.url}\n`);
