// A worker process for the process tests: `node worker.js` with its options as JSON in QUEUE_PROC
// (QueueWorkerOptions, less its functions). Prints `ready` once its servers are read and published, and
// `onOutputs <job id> <prompt id>` each time its onOutputs runs (a test counts them over every worker); SIGTERM
// closes it (hands back or finishes what it holds), SIGKILL is the test's crash.
import { QueueWorker, type QueueWorkerOptions } from '../../../src/queue/index.ts';

const options = JSON.parse(process.env.QUEUE_PROC ?? '{}') as QueueWorkerOptions;
const worker = new QueueWorker({
  logLevel: 'warn',
  ...options,
  onOutputs: (result, job) => void process.stdout.write(`onOutputs ${job.id} ${result.promptId}\n`),
});
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0), (err: unknown) => {
    process.stderr.write(`close failed: ${String(err)}\n`);
    process.exit(1);
  });
});
await worker.ready();
process.stdout.write('ready\n');
