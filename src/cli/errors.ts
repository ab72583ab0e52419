/**
 * Every failure as the CLI reports it: an exit code and one line saying what
 * failed and what to do (one line per issue for an invalid workflow). SDK
 * messages are already redacted; nothing here adds a secret or an
 * environment value, only the names of variables and options.
 *
 * Exit codes: 0 success · 1 the job failed, was cancelled or refused (and any
 * other failure) · 2 usage · 3 authentication, credits, subscription · 4 the
 * server could not be reached · 5 the workflow file has problems (not a
 * workflow, or saved in the editor and not convertible: the file is to be
 * fixed, not the command line) · 130 interrupted (Ctrl-C) · 141 standard output
 * closed while a job was followed (`platformui run … | head -2`: the job is
 * stopped as on Ctrl-C; 141 = 128 + SIGPIPE, as a shell reports a process
 * killed by it). Read-only commands (`jobs`, `nodes search`…) whose reader
 * stopped early exit 0 quietly instead, as Unix tools do.
 *
 * @module
 */
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  ExecutionError,
  InsufficientCreditsError,
  InvalidArgumentError,
  JobCancelledError,
  JobTimeoutError,
  MissingCredentialsError,
  PermissionDeniedError,
  SubmissionError,
  SubscriptionInactiveError,
  WorkflowValidationError,
} from '../index.ts';
import { UsageError } from './args.ts';

/** Ctrl-C ended the command (exit 130); the message says what became of the job. */
export class Interrupted extends Error {
  override name = 'Interrupted';
  /** 130 (Ctrl-C) or 141 (standard output closed). */
  readonly code: number;
  /** The job it was about, when one was submitted: `--json` gives it to the script. */
  readonly promptId: string | undefined;
  constructor(message: string, code: number = 130, promptId?: string) {
    super(message);
    this.code = code;
    this.promptId = promptId;
  }
}

/**
 * The workflow file was read but cannot be run as it is (not a workflow, or
 * saved in the editor and not convertible): exit 5, and no "see --help",
 * since no option would fix it.
 */
export class WorkflowFileError extends Error {
  override name = 'WorkflowFileError';
}

/** The exit codes, by meaning. */
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, unreachable: 4, workflowFile: 5, interrupted: 130, brokenPipe: 141 } as const;

/**
 * The SDK's options as the command line spells them, for SDK messages that
 * name one: a user of the command line has a flag, not an options object.
 */
const CLI_SPELLING: ReadonlyArray<readonly [string, string]> = [["{ widgetValues: 'editor' }", '--widget-values editor']];

/** `message` with the SDK's option names replaced by the command line's flags. */
export function inCliWords(message: string): string {
  return CLI_SPELLING.reduce((m, [sdk, cli]) => m.replaceAll(sdk, cli), message);
}

/** What the CLI says about a failure. */
export interface Failure {
  code: number;
  /** One line each; the first says what failed. */
  lines: string[];
  /** For several lines: one line that sums them up (the progress display's last word). */
  summary?: string;
}

/** Facts about the invocation that make a message actionable. */
export interface FailureContext {
  /** The kind of service the command talked to: names the right variables. */
  service: 'cloud' | 'registry';
  /**
   * The cloud client sent no key (a loopback server): a 401 then means the
   * server wants one. `url` is the server, `how` says how to give it one.
   */
  noKeySent?: { url: string; how: string } | undefined;
}

/**
 * What the server itself said in an error's body (`No route for GET
 * /api/jobs`), or `''`: the part of the SDK's message after its
 * `<status> <method> <url> — ` prefix, without the body's error code when
 * a message follows it.
 */
export function serverMessage(err: APIError): string {
  const prefix = `${err.status} ${err.method} ${err.url}`;
  // The SDK's own hint (how to send a key) is not the server's: the command line says it its own way.
  const message = err.hint && err.message.endsWith(`; ${err.hint}`) ? err.message.slice(0, -err.hint.length - 2) : err.message;
  const said = message.startsWith(prefix) ? message.slice(prefix.length).replace(/^ — /, '') : '';
  // The body's error code (`unauthorized: …`) only when it is all there is.
  const code = typeof err.error === 'string' ? `${err.error}: ` : '';
  return code && said.startsWith(code) && said.length > code.length ? said.slice(code.length) : said.replace(/: $/, '');
}

/** The origin of a redacted request URL (`http://127.0.0.1:8188`), or the URL as given. */
function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : url;
}

const secondsOf = (ms: number | undefined) => (ms === undefined ? '' : ms < 1000 ? ` in ${ms} ms` : ` in ${Math.round(ms / 100) / 10} s`);

/**
 * The one JSON line `--json` gives a failure on standard output, whatever
 * failed and whenever (a usage error before anything, a refused key, a job
 * that failed): `type` is always `error`; `class` the error's class
 * (`UsageError`, `AuthenticationError`, `ExecutionError`, `WorkflowFileError`…);
 * `code` the exit code; `message` the lines standard error gets, without the
 * command's prefix (several joined by newlines); `status` the HTTP status when
 * the server answered with one; `promptId` the job, when there is one.
 */
export function failureJSON(err: unknown, failure: Failure): Record<string, unknown> {
  const status = err instanceof APIError && typeof err.status === 'number' ? err.status : undefined;
  const promptId = (err as { promptId?: unknown } | undefined)?.promptId;
  return {
    type: 'error',
    class: err instanceof Error ? err.name : 'Error',
    code: failure.code,
    ...(status !== undefined ? { status } : {}),
    message: failure.lines.join('\n'),
    ...(typeof promptId === 'string' ? { promptId } : {}),
  };
}

/** The exit code and lines for `err`, in the command line's words. */
export function describeFailure(err: unknown, ctx: FailureContext): Failure {
  const failure = describe(err, ctx);
  return { ...failure, lines: failure.lines.map(inCliWords) };
}

function describe(err: unknown, ctx: FailureContext): Failure {
  const cloud = ctx.service === 'cloud';
  const keyVar = cloud ? 'PLATFORMUI_API_KEY' : 'PLATFORMUI_TOKEN';
  const keyFile = cloud ? '--api-key-file' : '--token-file';
  const urlVar = cloud ? 'PLATFORMUI_CLOUD_URL' : 'PLATFORMUI_BASE_URL';

  if (err instanceof UsageError) return { code: EXIT.usage, lines: [err.message] };
  if (err instanceof WorkflowFileError) return { code: EXIT.workflowFile, lines: [err.message] };
  if (err instanceof Interrupted) return { code: err.code, lines: [err.message] };
  if (err instanceof APIUserAbortError) return { code: EXIT.interrupted, lines: ['interrupted'] };
  // Before the generic InvalidArgumentError: these are subclasses of it.
  if (err instanceof MissingCredentialsError) {
    return { code: EXIT.auth, lines: [`no ${cloud ? 'API key' : 'token'}: set ${keyVar} or pass ${keyFile} FILE`] };
  }
  if (err instanceof WorkflowValidationError) {
    const errors = err.issues.filter((i) => i.severity === 'error');
    const summary = `the workflow has ${errors.length} error${errors.length === 1 ? '' : 's'}: nothing was submitted`;
    return { code: EXIT.failed, lines: errors.map((i) => `invalid workflow: ${i.message}`), summary };
  }
  if (err instanceof InvalidArgumentError) {
    if (err.field === 'baseUrl') {
      const why = err.message.replace(/^baseUrl: /, '');
      return { code: EXIT.usage, lines: [/^is required/.test(why) ? `no server: pass --server URL or set ${urlVar}` : `the server's URL (--server or ${urlVar}) ${why}`] };
    }
    return { code: EXIT.usage, lines: [err.message] };
  }
  if (err instanceof AuthenticationError && ctx.noKeySent) {
    const said = serverMessage(err);
    return { code: EXIT.auth, lines: [`${ctx.noKeySent.url} wants an API key (401${said ? `: ${said}` : ''}), and none was sent: ${ctx.noKeySent.how}`] };
  }
  if (err instanceof AuthenticationError) {
    return { code: EXIT.auth, lines: [`the server refused the ${cloud ? 'API key' : 'token'} (401): check ${keyVar} or ${keyFile}`] };
  }
  if (err instanceof PermissionDeniedError) {
    return { code: EXIT.auth, lines: [`not allowed (403) for this ${cloud ? 'API key' : 'token'}: ${err.message}`] };
  }
  if (err instanceof InsufficientCreditsError) {
    return { code: EXIT.auth, lines: ['not enough credits (402): add credits to the account, then run again'] };
  }
  if (err instanceof SubscriptionInactiveError) {
    return { code: EXIT.auth, lines: ['the subscription is not active (429): renew it, then run again'] };
  }
  if (err instanceof SubmissionError) return { code: EXIT.failed, lines: [`the server refused the workflow: ${err.message}`] };
  if (err instanceof ExecutionError) return { code: EXIT.failed, lines: [err.message] };
  if (err instanceof JobCancelledError) return { code: EXIT.failed, lines: [err.message] };
  // A job gone silent is a job that failed to finish, not an unreachable server.
  if (err instanceof JobTimeoutError) return { code: EXIT.failed, lines: [`${err.message}: stopped it; allow more with --timeout`] };
  // A submission whose answer was lost and whose job was not found by its id: it may run (and cost) all the same.
  if (err instanceof APIConnectionError && err.promptId && err.sent === 'maybe') {
    return { code: EXIT.unreachable, lines: [`the submission to ${originOf(err.url)} got no answer, and job ${err.promptId} was not found by its id: it may exist (\`platformui job ${err.promptId}\` tells); it was not sent again`] };
  }
  if (err instanceof APITimeoutError) {
    return { code: EXIT.unreachable, lines: [`no answer from ${originOf(err.url)}${secondsOf(err.timeout)}: is the server up? (--server or ${urlVar}; --timeout to wait longer)`] };
  }
  if (err instanceof APIConnectionError) {
    const cause = err.message.replace(/: [A-Z]+ \S+( \(job \S+ was not sent\))?$/, '');
    return { code: EXIT.unreachable, lines: [`could not reach ${originOf(err.url)} (${cause}): is the server running? (--server or ${urlVar})`] };
  }
  if (err instanceof APIError) return { code: EXIT.failed, lines: [err.message] };
  return { code: EXIT.failed, lines: [err instanceof Error ? err.message : String(err)] };
}

/** The stack of `err` and of its causes, for `--verbose`. */
export function stackOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    parts.push(`${depth ? 'caused by: ' : ''}${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  }
  return parts.join('\n');
}
