// A producer process: adds the jobs QUEUE_PROC lists ({ connection, name?, jobs: [{ jobId, prefix }] }),
// each the invert workflow saving under its own prefix, prints `added <id>` for each, and exits at
// once: no close(), as a web server's request handler that dies right after enqueueing.
import { JobQueue } from '../../../src/queue/index.ts';
import { jobWorkflow } from './workflows.ts';

const { connection, name, jobs } = JSON.parse(process.env.QUEUE_PROC ?? '{}') as { connection: string; name?: string; jobs: Array<{ jobId: string; prefix: string }> };
const queue = new JobQueue({ connection, ...(name ? { name } : {}) });
for (const { jobId, prefix } of jobs) {
  const job = await queue.add(jobWorkflow(prefix), { jobId });
  process.stdout.write(`added ${job.id}\n`);
}
process.exit(0);
