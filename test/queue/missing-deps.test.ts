// Without bullmq (an optional peer dependency), the queue says so in one line naming the install.
import { expect, it, vi } from 'vitest';

vi.mock('bullmq', () => {
  throw new Error("Cannot find package 'bullmq'");
});

it('a missing bullmq is one clear line', async () => {
  const { JobQueue, MISSING_DEPS } = await import('../../src/queue/index.ts');
  expect(MISSING_DEPS).toBe('@platformui/sdk/queue needs bullmq and ioredis: npm install bullmq ioredis');
  const q = new JobQueue({ connection: 'redis://127.0.0.1:1' });
  await expect(q.add({ '1': { class_type: 'EmptyImage', inputs: {} } })).rejects.toThrow(MISSING_DEPS);
  await q.close();
});

it('a bad connection or name is refused before any connection', async () => {
  const { JobQueue, QueueWorker } = await import('../../src/queue/index.ts');
  expect(() => new JobQueue({ connection: 'http://x' })).toThrow(/redis:\/\//);
  expect(() => new JobQueue({ connection: 'redis://x', name: 'a:b' })).toThrow(/name|letters/);
  expect(() => new QueueWorker({ connection: 'redis://x', servers: [], concurrency: 0 })).toThrow(/positive integer/);
});
