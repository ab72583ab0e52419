/**
 * What `v1.ts` loads on a client's first request about a job: the routes of
 * the cloud and a local server, the queue read and delete, the interrupt.
 *
 * @module
 */
export { cloudRoutes } from './cloud.ts';
export { localRoutes } from './local.ts';
export { deleteFromQueue, queueState } from './routes.ts';
export { interrupt } from './stop.ts';
