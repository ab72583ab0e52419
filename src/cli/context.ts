/**
 * What every command gets: the global options, where to write, the output
 * mode and colours, and the SDK clients built from `--server` and the
 * credential files (or the environment, read by the clients themselves).
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { styleText } from 'node:util';
import { CloudClient, CloudPool, RegistryClient, type ClientOptions, type LogOptions } from '../index.ts';
import type { LogDetails } from '../transport/log.ts';
import { commandLog, LOG_LEVELS } from '../transport/log.ts';
import { unreadable, UsageError } from './args.ts';
import type { DisplayMode } from './display.ts';
import type { FailureContext } from './errors.ts';
import { WaitNotice } from './waiting.ts';


/** A stream the CLI writes to: `process.stdout`, or a test's buffer. */
export interface Writer {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** The CLI's streams and environment. */
export interface CliIO {
  stdout: Writer;
  stderr: Writer;
  /** Read for `NO_COLOR` and for the error hints; the clients read their own variables from `process.env`. */
  env: Readonly<Record<string, string | undefined>>;
}

/** The options every command takes. */
export interface GlobalOptions {
  /** `--server URL`: the cloud (cloud commands) or the registry (registry commands); the last one given. */
  server: string | undefined;
  /** Every `--server`, in order: `run` with several runs through a pool. */
  servers: string[];
  /** `--server-kind KIND` (else `PLATFORMUI_SERVER_KIND`): what the cloud servers speak; `undefined`: `auto`. */
  serverKind?: 'auto' | 'cloud' | 'local' | 'v2' | undefined;
  /** `--api-key-file PATH`: the cloud API key, read from a file (never from the command line). */
  apiKeyFile: string | undefined;
  /** `--token-file PATH`: the registry token, read from a file. */
  tokenFile: string | undefined;
  /** `--timeout DURATION` in ms: the clients' per-request timeout (and run's silence deadline). */
  timeout: number | undefined;
  json: boolean;
  verbose: boolean;
  noColor: boolean;
}

/** A `styleText` format: a colour or a modifier. */
export type Style = Parameters<typeof styleText>[0];

/** Reads a credential file: its trimmed content, never shown anywhere. */
export async function readSecret(path: string, option: string): Promise<string> {
  const text = await readFile(path, 'utf8').catch((err: unknown) => {
    throw unreadable(option, path, err);
  });
  const value = text.trim();
  if (value === '') throw new UsageError(`${option}: ${path} is empty`);
  return value;
}

/** The per-invocation state commands share; {@link close} releases the clients. */
export class Context {
  readonly global: GlobalOptions;
  /** The streams: on a terminal, each write first erases the "waiting for …" line. */
  readonly io: CliIO;
  /** Set once the progress display has shown the failure being reported. */
  failureShown = false;
  /**
   * While a live block is on the terminal: prints a line above it. The
   * clients' log lines go there then (a line written under the block would
   * break its redraw); `withDisplay` sets it.
   */
  above: ((line: string) => void) | undefined;
  readonly #notice: WaitNotice | undefined;
  #log: Required<LogOptions> | undefined;
  #cloud: CloudClient | undefined;
  #pool: CloudPool | undefined;

  constructor(global: GlobalOptions, io: CliIO) {
    this.global = global;
    // What a command waits for, said on a terminal only: a log or a pipe gets the answer or the error, nothing between.
    this.#notice = io.stderr.isTTY && !global.json ? new WaitNotice(io.stderr, (t) => this.style('dim', t)) : undefined;
    this.io = this.#notice ? { ...io, stdout: this.#notice.wrap(io.stdout), stderr: this.#notice.wrap(io.stderr) } : io;
  }

  /**
   * The clients' log: to standard error, level `PLATFORMUI_LOG`, else `warn`
   * (see {@link commandLog}): a retry, a server of a pool gone down, a filter
   * that matches nothing are what the command is doing. With the "waiting
   * for …" line, the clients log everything, and the line hears of each
   * request's end; standard error still gets only the level asked.
   */
  get log(): Required<LogOptions> {
    if (this.#log) return this.#log;
    const shown = commandLog(this.io.env.PLATFORMUI_LOG, (text) => void (this.above ? this.above(text.trimEnd()) : this.io.stderr.write(text)), 'warn');
    const notice = this.#notice;
    if (!notice) return (this.#log = shown);
    const upTo = LOG_LEVELS.indexOf(shown.logLevel);
    const level = (name: 'error' | 'warn' | 'info' | 'debug') => (message: string, details?: LogDetails) => {
      if (name === 'debug') notice.logged(details);
      if (LOG_LEVELS.indexOf(name) <= upTo) shown.logger[name](message, details);
    };
    return (this.#log = { logLevel: 'debug', logger: { error: level('error'), warn: level('warn'), info: level('info'), debug: level('debug') } });
  }

  /** `json` with `--json`, `tty` on a terminal, else `plain` (a pipe, a file, CI). */
  get mode(): DisplayMode {
    if (this.global.json) return 'json';
    return this.io.stdout.isTTY ? 'tty' : 'plain';
  }

  /** Colours only on a terminal, and never with `NO_COLOR` (any non-empty value) or `--no-color`. */
  get color(): boolean {
    return this.io.stdout.isTTY === true && !this.io.env.NO_COLOR && !this.global.noColor && !this.global.json;
  }

  /** Writes one line to standard output. */
  print(line = ''): void {
    this.io.stdout.write(`${line}\n`);
  }

  /** Writes one value as one JSON line to standard output. */
  printJSON(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Writes one line to standard error. */
  warn(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }

  /** `text` styled when colours are on, as is otherwise. */
  style(format: Style, text: string): string {
    return this.color ? styleText(format, text, { validateStream: false }) : text;
  }

  /** What every client gets: the log, `--timeout`, and the hooks of the "waiting for …" line. */
  /** `server` for the cloud clients: `--server-kind`, else `PLATFORMUI_SERVER_KIND`, else the client's own `auto`. */
  get #serverKind(): { server?: 'auto' | 'cloud' | 'local' | 'v2' } {
    return this.global.serverKind ? { server: this.global.serverKind } : {};
  }

  get #clientOptions(): ClientOptions {
    return {
      ...this.log,
      ...(this.global.timeout !== undefined ? { timeout: this.global.timeout } : {}),
      ...(this.#notice ? { hooks: this.#notice.hooks } : {}),
    };
  }

  /**
   * The cloud client (one per invocation). `--server` is its `baseUrl`; the key
   * is `--api-key-file`'s, else what the client reads itself: `PLATFORMUI_API_KEY`,
   * which by the SDK's key rule goes with `PLATFORMUI_CLOUD_URL` or a cloud URL
   * but is never sent to a loopback `--server` (it may be the key of the cloud),
   * unless that `--server` is `PLATFORMUI_CLOUD_URL`'s server itself.
   */
  async cloud(): Promise<CloudClient> {
    if (this.#cloud) return this.#cloud;
    const apiKey = (await this.#apiKey()) ?? this.#envKeyFor(this.global.server);
    this.#cloud = new CloudClient({
      ...this.#clientOptions,
      ...this.#serverKind,
      ...(this.global.server !== undefined ? { baseUrl: this.global.server } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
    });
    return this.#cloud;
  }

  /**
   * A pool over every `--server` (run with several), each a cloud client as
   * {@link cloud} makes one: the same key rule and log.
   */
  async pool(): Promise<CloudPool> {
    if (this.#pool) return this.#pool;
    this.#pool = new CloudPool(await this.serverOptions(this.global.servers), this.log);
    return this.#pool;
  }

  /**
   * The options of one client per URL, as {@link pool} gives its servers
   * (`id` is the URL): the log, `--timeout`, and the key by the same rule as
   * {@link cloud}'s. For the queue's worker and for a client of the server a
   * queued job ran on.
   */
  async serverOptions(urls: readonly string[]): Promise<Array<ClientOptions & { id: string; baseUrl: string }>> {
    const fileKey = await this.#apiKey();
    return urls.map((baseUrl) => {
      const apiKey = fileKey ?? this.#envKeyFor(baseUrl);
      return { ...this.#clientOptions, ...this.#serverKind, id: baseUrl, baseUrl, ...(apiKey !== undefined ? { apiKey } : {}) };
    });
  }

  /** The registry client: `--server`, else `PLATFORMUI_BASE_URL`; the token from `--token-file`, else `PLATFORMUI_TOKEN`. */
  async registry(): Promise<RegistryClient> {
    const token = this.global.tokenFile === undefined ? undefined : await readSecret(this.global.tokenFile, '--token-file');
    return new RegistryClient({
      ...this.#clientOptions,
      ...(this.global.server !== undefined ? { baseUrl: this.global.server } : {}),
      ...(token !== undefined ? { token } : {}),
    });
  }

  /**
   * What makes a failure of `service` actionable: when the cloud client sent
   * no key (a loopback server), a 401 means the server wants one, and how to
   * give it depends on where the server and the key would come from.
   */
  failureContext(service: FailureContext['service']): FailureContext {
    const cloud = this.#cloud;
    if (service !== 'cloud' || cloud?.server !== 'local') return { service };
    const url = cloud.baseUrl.replace(/\/$/, '');
    let how: string;
    if (this.global.server === undefined) how = 'set PLATFORMUI_API_KEY=…, or pass --api-key-file FILE';
    else if (this.io.env.PLATFORMUI_API_KEY) {
      how = `PLATFORMUI_API_KEY goes only to the server PLATFORMUI_CLOUD_URL names, not to another loopback --server (it may be your cloud key): set PLATFORMUI_CLOUD_URL=${url}, or pass --api-key-file FILE`;
    } else how = `set PLATFORMUI_CLOUD_URL=${url} PLATFORMUI_API_KEY=… (a loopback --server gets the environment's key only when PLATFORMUI_CLOUD_URL names it), or pass --api-key-file FILE`;
    return { service, noKeySent: { url, how } };
  }

  /**
   * `PLATFORMUI_API_KEY` when `server` (a `--server`) is the server
   * `PLATFORMUI_CLOUD_URL` names; else `undefined`, and the client applies the
   * key rule itself (the environment's key never to another loopback server).
   */
  #envKeyFor(server: string | undefined): string | undefined {
    // The command line's one environment (`io.env`), as for the log level and the 401 hint.
    const { PLATFORMUI_CLOUD_URL: envUrl, PLATFORMUI_API_KEY: key } = this.io.env;
    if (server === undefined || !envUrl || !URL.canParse(server) || !URL.canParse(envUrl)) return undefined;
    const norm = (u: string) => new URL(u).href.replace(/\/+$/, '');
    return norm(server) === norm(envUrl) ? key || undefined : undefined;
  }

  /** `--api-key-file`'s key, when given. */
  async #apiKey(): Promise<string | undefined> {
    return this.global.apiKeyFile === undefined ? undefined : readSecret(this.global.apiKeyFile, '--api-key-file');
  }

  /** Closes the cloud client's socket, if one is open, and the pool's; erases the "waiting for …" line. */
  close(): void {
    this.#notice?.close();
    this.#cloud?.close();
    void this.#pool?.close();
  }
}
