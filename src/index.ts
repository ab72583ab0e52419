/**
 * `@platformui/sdk`: typed clients for the node registry, the partner proxy
 * and the cloud workflow service. This file is the public surface and nothing else.
 *
 * @packageDocumentation
 */
export * from './errors.ts';
export { RegistryClient, type RegistryClientOptions } from './registry/client.ts';
export { Page, type PageBody, type PageFetcher } from './registry/pagination.ts';
export { ProxyClient, type ProxyClientOptions } from './proxy/client.ts';
export { parseTaskNotification, TaskNotification } from './proxy/notification.ts';
export {
  CloudClient,
  type CloudClientOptions,
  type InterruptOptions,
  type NodeReadableLike,
  type SubmitOptions,
  type UploadImageOptions,
  type UploadInput,
  type UploadMaskOptions,
} from './cloud/client.ts';
export {
  CloudSocket,
  type BinaryEvent,
  type CloudSocketEvents,
  type CloudSocketOptions,
  type SocketEvent,
} from './cloud/socket.ts';
export type { JobResult, RunOptions, WaitForJobOptions } from './cloud/run.ts';
export {
  filesOf,
  isFinalPhase,
  jobPhase,
  JobPage,
  toQueueItem,
  type JobBackend,
  type JobPageFetcher,
  type JobPhase,
  type JobRecord,
  type JobStatusResult,
  type QueueItem,
  type QueueState,
} from './cloud/jobs.ts';
export {
  decodeFrame,
  decodeFrameAsync,
  encodeFrame,
  isImageFrame,
  sniffImageMime,
  FRAME_TYPES,
  IMAGE_TYPE_MIME,
  type EncodableFrame,
  type ImageFrame,
  type ImageMime,
  type PreviewFrame,
  type PreviewImageFrame,
  type PreviewImageWithMetadataFrame,
  type PreviewMetadata,
  type TextFrame,
  type UnknownFrame,
} from './cloud/frames.ts';
export {
  parseMessage,
  promptIdOf,
  isMessage,
  type CloudMessage,
  type InvalidMessage,
  type KnownMessage,
  type MalformedMessage,
  type MessageOf,
  type UnknownMessage,
} from './cloud/messages.ts';
export { APIPromise, type WithResponse } from './transport/promise.ts';
export { PagePromise, type ItemOf } from './transport/pages.ts';
export type { ClientOptions, Credential, Hooks, RequestOptions, RetryOptions } from './transport/options.ts';
export { redactUrl } from './transport/redact.ts';
export * from './schemas/registry.ts';
export * from './schemas/proxy.ts';
export * from './schemas/cloud.ts';
export * from './schemas/events.ts';
