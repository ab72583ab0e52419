/**
 * `@platformui/sdk`: typed clients for the node registry, the partner proxy
 * and the cloud workflow service. This file is the public surface and nothing else.
 *
 * @packageDocumentation
 */
export * from './errors.ts';
export { RegistryClient, type RegistryClientOptions } from './registry/client.ts';
export { Page, PagePromise, type PageBody, type PageFetcher } from './registry/pagination.ts';
export { ProxyClient, type ProxyClientOptions } from './proxy/client.ts';
export { parseTaskNotification, TaskNotification } from './proxy/notification.ts';
export {
  CloudClient,
  type CloudClientOptions,
  type NodeReadableLike,
  type SubmitOptions,
  type UploadImageOptions,
  type UploadInput,
  type UploadMaskOptions,
} from './cloud/client.ts';
export { APIPromise, type WithResponse } from './transport/promise.ts';
export type { ClientOptions, Credential, RequestOptions, RetryOptions } from './transport/options.ts';
export { redactUrl } from './transport/redact.ts';
export * from './schemas/registry.ts';
export * from './schemas/proxy.ts';
export * from './schemas/cloud.ts';
