/**
 * The SDK's log: what the clients, the socket, `run()` and the emulator tell
 * a user who turns it on (`logLevel`, or `PLATFORMUI_LOG` in Node).
 *
 * Each enabled level is a function and each disabled one `undefined`, so a
 * call site reads `log.debug?.(message, { … })`: when the level is off,
 * neither the message nor the details object is ever built.
 *
 * Every line passes {@link scrub} with the client's live credentials on its
 * way out, behind the call sites' own care (URLs through `redactUrl`, no
 * body, no header): a secret that slips into a message is still replaced.
 *
 * @module
 */
import { APIConnectionError, InvalidArgumentError, JobNotStoppedError, PlatformUIError } from '../errors.ts';
import { fromEnv } from './options.ts';
import { redactText, scrub } from './redact.ts';

/** How much is logged: each level includes the ones before it. `'off'` logs nothing. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/** The structured part of a log line: a plain JSON-serializable object (no body, no secret). */
export type LogDetails = Record<string, unknown>;

/**
 * Where log lines go: `console` (the default), or any object with these four
 * methods. Each is called as `(message, details)`; pino and other loggers
 * that take `(details, message)` need a two-line adapter (see the README).
 */
export interface Logger {
  error(message: string, details?: LogDetails): void;
  warn(message: string, details?: LogDetails): void;
  info(message: string, details?: LogDetails): void;
  debug(message: string, details?: LogDetails): void;
}

/** Logging options, the same in every client and the emulator. */
export interface LogOptions {
  /**
   * How much to log. Default `'warn'`: a good day prints nothing. In Node,
   * `PLATFORMUI_LOG` (`off`, `error`, `warn`, `info` or `debug`) sets it when
   * this option is absent; a browser bundle never reads it.
   */
  logLevel?: LogLevel;
  /** Where lines go. Default `console`. */
  logger?: Logger;
}

/** One line of one level: the message, and its details. */
export type LogFn = (message: string, details: LogDetails) => void;

/** A method per enabled level, `undefined` for the others: `log.debug?.(…)` builds nothing when debug is off. */
export interface Log {
  readonly error?: LogFn | undefined;
  readonly warn?: LogFn | undefined;
  readonly info?: LogFn | undefined;
  readonly debug?: LogFn | undefined;
}

/** The log levels, quietest first. */
export const LOG_LEVELS: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug'];
const METHODS = ['error', 'warn', 'info', 'debug'] as const;

/** A log that logs nothing. */
export const SILENT: Log = {};

const isLevel = (v: unknown): v is LogLevel => LOG_LEVELS.includes(v as LogLevel);

/**
 * The log of one client (or of the emulator).
 *
 * @param options The client's `logLevel` and `logger`; invalid ones throw {@link InvalidArgumentError}.
 * @param secrets The values to scrub from every line (read when a line is written: credentials resolve late).
 * @param config `prefix` of every message; `env: false` not to read `PLATFORMUI_LOG`.
 */
export function createLog(options: LogOptions, secrets: () => readonly string[] = () => [], config: { prefix?: string; env?: boolean } = {}): Log {
  const { logLevel, logger = globalThis.console } = options;
  if (logLevel !== undefined && !isLevel(logLevel)) {
    throw new InvalidArgumentError(`must be one of 'off', 'error', 'warn', 'info' or 'debug', got ${JSON.stringify(String(logLevel))}`, 'logLevel');
  }
  if (options.logger !== undefined && !METHODS.every((m) => typeof (logger as unknown as Record<string, unknown> | null)?.[m] === 'function')) {
    throw new InvalidArgumentError('must be an object with error, warn, info and debug methods (console, or an adapter: see the README)', 'logger');
  }
  const env = logLevel === undefined && config.env !== false ? fromEnv('PLATFORMUI_LOG') : undefined;
  const envLevel = env === undefined ? undefined : env.trim().toLowerCase();
  const level = logLevel ?? (isLevel(envLevel) ? envLevel : 'warn');
  const rank = LOG_LEVELS.indexOf(level);
  const prefix = config.prefix ?? '[platformui]';
  const log: { -readonly [K in keyof Log]: LogFn } = {};
  METHODS.forEach((method, i) => {
    if (i + 1 > rank) return;
    log[method] = (message, details) => {
      const s = secrets();
      try {
        const line = `${prefix} ${scrub(message, s)}`;
        // The console prints an empty object as a trailing ` {}`; another logger keeps the
        // documented `(message, details)` call (the README's pino adapter reads `d`).
        if (logger === globalThis.console && Object.keys(details).length === 0) logger[method](line);
        else logger[method](line, scrub(details, s));
      } catch {
        // A logger that throws must not fail the request it was told about.
      }
    };
  });
  if (env !== undefined && !isLevel(envLevel)) log.warn?.(`PLATFORMUI_LOG=${JSON.stringify(env.slice(0, 20))} is not a level (off, error, warn, info, debug): using warn`, {});
  return log;
}

/**
 * The log options of a command-line tool: each line, message only, to
 * `write` (standard error: standard output is the command's answer). Level
 * `asked` (`PLATFORMUI_LOG`, a `--log-level`), else `fallback`, `error` by
 * default: the tool reports a failure itself, and a retry that worked is no
 * news there.
 */
export function commandLog(asked: string | undefined, write: (text: string) => void, fallback: LogLevel = 'error'): Required<LogOptions> {
  const level = asked?.trim().toLowerCase();
  const line = (message: string) => write(`${message}\n`);
  if (level && !isLevel(level)) line(`[platformui] ${JSON.stringify(asked!.slice(0, 20))} is not a log level (off, error, warn, info, debug): using ${fallback}`);
  return { logLevel: isLevel(level) ? level : fallback, logger: { error: line, warn: line, info: line, debug: line } };
}

const SHOWN_FIELDS = ['status', 'field', 'reason', 'timeout', 'exceptionType', 'nodeType', 'nodeId', 'taskId'] as const;

/**
 * The parts of an error a log line may show: its class and the fields that
 * say what happened (status, node, exception type…). Not the message of an
 * SDK error: that can quote a server's body (an error message, a prompt in a
 * traceback, a value that failed validation). A connection failure keeps its
 * reason (URLs redacted), a job not seen stopped its own (the job, its phase,
 * the bound), and an error of the caller's own code its message.
 */
export function errorDetails(err: unknown): LogDetails {
  if (!(err instanceof Error)) return { error: typeof err };
  const e = err as unknown as Record<string, unknown>;
  const out: LogDetails = { error: err.name };
  for (const k of SHOWN_FIELDS) if (typeof e[k] === 'string' || typeof e[k] === 'number') out[k] = e[k];
  // An API error's `error` member is a code (`not_found`), unless a server put prose there.
  if (typeof e.error === 'string' && /^[\w.-]{1,40}$/.test(e.error)) out.code = e.error;
  if (err instanceof APIConnectionError || err instanceof JobNotStoppedError || !(err instanceof PlatformUIError)) out.message = redactText(err.message);
  return out;
}

/** An error in a log message: its class, and its message when {@link errorDetails} shows it. */
export function describeError(err: unknown): string {
  const d = errorDetails(err);
  return `${String(d.error)}${d.status !== undefined ? ` ${String(d.status)}` : ''}${d.message !== undefined ? `: ${String(d.message)}` : ''}`;
}

/** `1 file`, `3 files`: a count in a log message. */
export const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

let requests = 0;

/** A short id for one call, shared by the log lines of all its attempts. */
export const nextRequestId = (): string => `req_${(++requests).toString(36)}`;
