/**
 * The root's error classes, as the browser build's lazily loaded files
 * (`dist/run.browser.js`: following a job; `dist/v2.browser.js`: Comfy API
 * v2; `validate.browser.js`, `missing-packs.browser.js`, `publish.browser.js`) take them: handed over by the client that loads the file
 * (`adoptErrors`, with {@link rootErrors}), not imported. An import would make
 * the file share the root's module with the app, and an app bundler then
 * loads those classes at start in every app; a copy would break
 * `err instanceof ExecutionError`. The build (tsup.config.ts,
 * `errorsByHand`) points those files' imports of `errors.ts` (and of the
 * feature error files whose classes are here: `job-errors.ts`,
 * `submission-errors.ts`) here; everywhere
 * else they import `errors.ts` itself, and these bindings stay unused.
 *
 * @module
 */
import * as E from '../errors.ts';
import * as J from './job-errors.ts';
import * as S from './submission-errors.ts';
import * as R from '../registry/errors.ts';

/* Live bindings, set once by adoptErrors() before any code of the file runs. */
export let PlatformUIError: typeof E.PlatformUIError;
export let APIError: typeof E.APIError;
export let APIConnectionError: typeof E.APIConnectionError;
export let APIUserAbortError: typeof E.APIUserAbortError;
export let DownloadError: typeof E.DownloadError;
export let ExecutionError: typeof J.ExecutionError;
export let FrameDecodeError: typeof E.FrameDecodeError;
export let InvalidArgumentError: typeof E.InvalidArgumentError;
export let JobCancelledError: typeof J.JobCancelledError;
export let JobExistsError: typeof S.JobExistsError;
export let JobExpiredError: typeof J.JobExpiredError;
export let JobNotStoppedError: typeof E.JobNotStoppedError;
export let JobTimeoutError: typeof J.JobTimeoutError;
export let NodeVersionUploadError: typeof R.NodeVersionUploadError;
export let NotFoundError: typeof E.NotFoundError;
export let ResponseValidationError: typeof E.ResponseValidationError;
export let ServerLostError: typeof J.ServerLostError;
export let SocketRefusedError: typeof E.SocketRefusedError;
export let SubmissionError: typeof S.SubmissionError;

/** The classes the lazily loaded files throw and check: the root's own. */
export type RootErrors = ReturnType<typeof rootErrors>;

/**
 * The root's classes, for {@link adoptErrors} (a function: only a client
 * that loads such a file keeps them all).
 */
export const rootErrors = () => ({
  PlatformUIError: E.PlatformUIError,
  APIError: E.APIError,
  APIConnectionError: E.APIConnectionError,
  APIUserAbortError: E.APIUserAbortError,
  DownloadError: E.DownloadError,
  ExecutionError: J.ExecutionError,
  FrameDecodeError: E.FrameDecodeError,
  InvalidArgumentError: E.InvalidArgumentError,
  JobCancelledError: J.JobCancelledError,
  JobExistsError: S.JobExistsError,
  JobExpiredError: J.JobExpiredError,
  JobNotStoppedError: E.JobNotStoppedError,
  JobTimeoutError: J.JobTimeoutError,
  NodeVersionUploadError: R.NodeVersionUploadError,
  NotFoundError: E.NotFoundError,
  ResponseValidationError: E.ResponseValidationError,
  ServerLostError: J.ServerLostError,
  SocketRefusedError: E.SocketRefusedError,
  SubmissionError: S.SubmissionError,
});

/** Takes the root's classes; called by the client with {@link rootErrors} when it loads the file. */
export function adoptErrors(e: RootErrors): void {
  ({
    PlatformUIError,
    APIError,
    APIConnectionError,
    APIUserAbortError,
    DownloadError,
    ExecutionError,
    FrameDecodeError,
    InvalidArgumentError,
    JobCancelledError,
    JobExistsError,
    JobExpiredError,
    JobNotStoppedError,
    JobTimeoutError,
    NodeVersionUploadError,
    NotFoundError,
    ResponseValidationError,
    ServerLostError,
    SocketRefusedError,
    SubmissionError,
  } = e);
}
