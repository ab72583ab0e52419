/**
 * The root's error classes, as the browser build's v2 chunk (`dist/v2.browser.js`)
 * takes them: handed over by the client that loads the chunk (`adoptErrors`),
 * not imported. An import would make the chunk share the root's module with
 * the app, and an app bundler then loads those classes at start in every app,
 * v2 or not; a copy would break `err instanceof SubmissionError`. The build
 * (tsup.config.ts, `errorsByHand`) points the chunk's imports of `errors.ts`
 * here; everywhere else they import `errors.ts` itself, and this module's
 * bindings stay unused.
 *
 * @module
 */
import type * as E from '../../errors.ts';

/* eslint-disable import/no-mutable-exports -- live bindings, set once by adoptErrors() before any v2 code runs */
export let PlatformUIError: typeof E.PlatformUIError;
export let APIError: typeof E.APIError;
export let APIConnectionError: typeof E.APIConnectionError;
export let APIUserAbortError: typeof E.APIUserAbortError;
export let DownloadError: typeof E.DownloadError;
export let ExecutionError: typeof E.ExecutionError;
export let InvalidArgumentError: typeof E.InvalidArgumentError;
export let JobCancelledError: typeof E.JobCancelledError;
export let JobExistsError: typeof E.JobExistsError;
export let JobExpiredError: typeof E.JobExpiredError;
export let JobNotStoppedError: typeof E.JobNotStoppedError;
export let NotFoundError: typeof E.NotFoundError;
export let ResponseValidationError: typeof E.ResponseValidationError;
export let SubmissionError: typeof E.SubmissionError;

/** The classes the v2 chunk throws and checks: the root's own. */
export interface RootErrors {
  PlatformUIError: typeof E.PlatformUIError;
  APIError: typeof E.APIError;
  APIConnectionError: typeof E.APIConnectionError;
  APIUserAbortError: typeof E.APIUserAbortError;
  DownloadError: typeof E.DownloadError;
  ExecutionError: typeof E.ExecutionError;
  InvalidArgumentError: typeof E.InvalidArgumentError;
  JobCancelledError: typeof E.JobCancelledError;
  JobExistsError: typeof E.JobExistsError;
  JobExpiredError: typeof E.JobExpiredError;
  JobNotStoppedError: typeof E.JobNotStoppedError;
  NotFoundError: typeof E.NotFoundError;
  ResponseValidationError: typeof E.ResponseValidationError;
  SubmissionError: typeof E.SubmissionError;
}

/** Takes the root's classes; called by the client with its own before the chunk's first use. */
export function adoptErrors(e: RootErrors): void {
  ({ PlatformUIError, APIError, APIConnectionError, APIUserAbortError, DownloadError, ExecutionError, InvalidArgumentError, JobCancelledError, JobExistsError, JobExpiredError, JobNotStoppedError, NotFoundError, ResponseValidationError, SubmissionError } = e);
}
