/**
 * What every command gets: the global options, where to write, the output
 * mode and colours, and the SDK clients built from `--server` and the
 * credential files (or the environment, read by the clients themselves).
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { styleText } from 'node:util';
import { CloudClient, CloudPool, RegistryClient, type LogOptions } from '../index.ts';
import { commandLog } from '../transport/log.ts';
import { UsageError } from './args.ts';
import type { DisplayMode } from './display.ts';

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
  /** `--api-key-file PATH`: the cloud API key, read from a file (never from the command line). */
  apiKeyFile: string | undefined;
  /** `--token-file PATH`: the registry token, read from a file. */
  tokenFile: string | undefined;
  json: boolean;
  verbose: boolean;
  noColor: boolean;
}

/** A `styleText` format: a colour or a modifier. */
export type Style = Parameters<typeof styleText>[0];

/** Reads a credential file: its trimmed content, never shown anywhere. */
export async function readSecret(path: string, option: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${option}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const value = text.trim();
  if (value === '') throw new UsageError(`${option}: ${path} is empty`);
  return value;
}

/** The per-invocation state commands share; {@link close} releases the clients. */
export class Context {
  readonly global: GlobalOptions;
  readonly io: CliIO;
  /** Set once the progress display has shown the failure being reported. */
  failureShown = false;
  #cloud: CloudClient | undefined;
  #pool: CloudPool | undefined;

  constructor(global: GlobalOptions, io: CliIO) {
    this.global = global;
    this.io = io;
  }

  /** The clients' log: to standard error, level `PLATFORMUI_LOG`, else `error` (see {@link commandLog}). */
  get log(): Required<LogOptions> {
    return commandLog(this.io.env.PLATFORMUI_LOG, (text) => void this.io.stderr.write(text));
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

  /**
   * The cloud client (one per invocation). `--server` is its `baseUrl`; the key
   * is `--api-key-file`'s, else what the client reads itself: `PLATFORMUI_API_KEY`,
   * which by the SDK's key rule goes with `PLATFORMUI_CLOUD_URL` or a cloud URL
   * but is never sent to a loopback `--server` (it may be the key of the cloud).
   */
  async cloud(): Promise<CloudClient> {
    if (this.#cloud) return this.#cloud;
    const apiKey = await this.#apiKey();
    this.#cloud = new CloudClient({
      ...this.log,
      ...(this.global.server !== undefined ? { baseUrl: this.global.server } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
    });
    return this.#cloud;
  }

  /**
   * A pool over every `--server` (run with several), each a cloud client as
   * {@link cloud} makes one: the same key and log.
   */
  async pool(): Promise<CloudPool> {
    if (this.#pool) return this.#pool;
    const apiKey = await this.#apiKey();
    this.#pool = new CloudPool(
      this.global.servers.map((baseUrl) => ({ ...this.log, id: baseUrl, baseUrl, ...(apiKey !== undefined ? { apiKey } : {}) })),
      this.log,
    );
    return this.#pool;
  }

  /** The registry client: `--server`, else `PLATFORMUI_BASE_URL`; the token from `--token-file`, else `PLATFORMUI_TOKEN`. */
  async registry(): Promise<RegistryClient> {
    const token = this.global.tokenFile === undefined ? undefined : await readSecret(this.global.tokenFile, '--token-file');
    return new RegistryClient({
      ...this.log,
      ...(this.global.server !== undefined ? { baseUrl: this.global.server } : {}),
      ...(token !== undefined ? { token } : {}),
    });
  }

  /**
   * Why the cloud may have refused the key, when the SDK's key rule kept the
   * environment's key from a loopback `--server`: what to do instead.
   */
  get keyRuleHint(): string | undefined {
    const skipped = this.#cloud?.server === 'local' && this.global.server !== undefined && this.global.apiKeyFile === undefined && !!this.io.env.PLATFORMUI_API_KEY;
    return skipped
      ? 'PLATFORMUI_API_KEY is not sent to a loopback --server (it may be your cloud key): pass --api-key-file FILE, or set PLATFORMUI_CLOUD_URL instead of --server'
      : undefined;
  }

  /** `--api-key-file`'s key, when given. */
  async #apiKey(): Promise<string | undefined> {
    return this.global.apiKeyFile === undefined ? undefined : readSecret(this.global.apiKeyFile, '--api-key-file');
  }

  /** Closes the cloud client's socket, if one is open, and the pool's. */
  close(): void {
    this.#cloud?.close();
    void this.#pool?.close();
  }
}
