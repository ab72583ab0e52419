/**
 * `@platformui/sdk`: typed clients for the node registry, the partner proxy
 * and the cloud workflow service. This file is the public surface and nothing else:
 * what users code against. Every runtime export is pinned by `test/exports.test.ts`,
 * so a new one is a decision, not an accident.
 *
 * @packageDocumentation
 */
export {
  PlatformUIError,
  APIError,
  BadRequestError,
  AuthenticationError,
  InsufficientCreditsError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  SubscriptionInactiveError,
  InternalServerError,
  APIConnectionError,
  APITimeoutError,
  SocketRefusedError,
  APIUserAbortError,
  JobNotStoppedError,
  UnsupportedError,
  InvalidArgumentError,
  MissingCredentialsError,
  ResponseValidationError,
  FrameDecodeError,
  DownloadError,
  type SchemaIssue,
  type ConnectionErrorInit,
} from './errors.ts';
export { JobTimeoutError, ServerLostError, JobExpiredError, ExecutionError, JobCancelledError, type ExceptionType } from './cloud/job-errors.ts';
export { PlacementError, PoolClosedError } from './cloud/pool/errors.ts';
export { JobExistsError, SubmissionError } from './cloud/submission-errors.ts';
export { WorkflowValidationError } from './workflow/errors.ts';
export { TaskFailedError, TaskTimeoutError, TaskNotFoundError } from './proxy/errors.ts';
export { NodeVersionUploadError } from './registry/errors.ts';
export { RegistryClient, type BulkNodeVersionResult, type ListNodeVersionsOptions, type PublishNodeVersionParams, type RegistryClientOptions } from './registry/client.ts';
export type { Page, PageBody } from './registry/pagination.ts';
export type { CoreClassUpdate, FindMissingPacksOptions, MissingPack, MissingPacks, OutsideRegistryClass } from './registry/missing-packs.ts';
export {
  ProxyClient,
  type ProxyClientOptions,
  type ProxyOperation,
  type WaitForTaskOptions,
  type StartAndWaitOptions,
  type ConfirmNotificationOptions,
  type DownloadResultOptions,
  type ProxyRequest,
  type ProxyRequestMethod,
} from './proxy/client.ts';
export { parseTaskNotification, type TaskNotification } from './proxy/notification.ts';
export {
  CloudClient,
  type CloudClientOptions,
  type InterruptOptions,
  type NodeReadableLike,
  type SubmitOptions,
  type UploadImageOptions,
  type UploadInput,
  type UploadMaskOptions,
  type ValidateWorkflowOptions,
  type WorkflowInput,
  type EditorWorkflowJSON,
} from './cloud/client.ts';
export type { StopJobOptions } from './cloud/protocol/stop.ts';
export type { ServerKind } from './cloud/protocol/types.ts';
export type { V2JobLogs, V2UploadResponse } from './cloud/v2/backend.ts';
export type { AssetReference, V2Asset, V2Job, V2JobError, V2Output, V2OutputFileRef, V2Progress, V2Status } from './cloud/v2/wire.ts';
export { validateWorkflow, type ValidateOptions, type WorkflowIssue, type WorkflowIssueCode } from './workflow/validate.ts';
export { Workflow } from './workflow/workflow.ts';
export type { EditorOptions, ExposedInput } from './workflow/editor.ts';
export type { NamedInput } from './workflow/inputs.ts';
export type { NodeHandle } from './workflow/node-handle.ts';
// `Workflow` is the class; the API-format JSON type (`Workflow` in `/schemas`) is `WorkflowJSON` here.
// The node-types generator is in `@platformui/sdk/codegen`: a build-time tool stays out of the root's bundle.
export type {
  AddOptions,
  AnyLink,
  ClassType,
  InputPath,
  InputsOf,
  Link,
  NodeSelector,
  NodeType,
  NodeTypes,
  OutputLink,
  OutputOf,
  Untyped,
  UntypedNode,
  WorkflowJSON,
} from './workflow/types.ts';
export type {
  CloudSocket,
  BinaryEvent,
  CloudSocketEvents,
  CloudSocketOptions,
  SocketEvent,
} from './cloud/socket.ts';
export type { FollowOptions, JobResult, RunOptions, WaitForJobOptions } from './cloud/run-options.ts';
export { CloudPool, type CloudPoolOptions, type PoolInput, type PoolJob, type PoolJobResult, type PoolRunOptions, type PoolServer, type PoolServerEvent, type PoolServerFields, type PoolServerStatus } from './cloud/pool/index.ts';
export {
  filesOf,
  isFinalPhase,
  jobPhase,
  type JobPage,
  type JobBackend,
  type JobPhase,
  type JobRecord,
  type JobStatusResult,
  type OutputFile,
  type QueueItem,
  type QueueState,
} from './cloud/jobs.ts';
export {
  decodeFrame,
  decodeFrameAsync,
  encodeFrame,
  isImageFrame,
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
  isMessage,
  type CloudMessage,
  type InvalidMessage,
  type KnownMessage,
  type MalformedMessage,
  type MessageOf,
  type UnknownMessage,
} from './cloud/messages.ts';
export { APIPromise, type WithResponse } from './transport/promise.ts';
export type { PagePromise, ItemOf } from './transport/pages.ts';
export type { ClientOptions, Credential, Hooks, RequestOptions, RetryOptions } from './transport/options.ts';
export type { Log, LogDetails, LogFn, LogLevel, LogOptions, Logger } from './transport/log.ts';
// The models as types only: their runtime schemas (and the enum value lists) are in
// `@platformui/sdk/schemas`, so importing `Node` here never shadows the DOM's `Node`.
export type * from './schemas/index.ts';
