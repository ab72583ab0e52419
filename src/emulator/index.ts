/**
 * `@platformui/sdk/emulator`: a local server speaking the services of the SDK
 * on one loopback port, for examples, demos and tests over real sockets
 * (DESIGN §6). Node only.
 *
 * Each service lives in its own module exporting a `Route[]` factory; this
 * file wires them into one server and owns its lifecycle.
 *
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkOptions, type OptionKeys } from '../args.ts';
import { createLog, type LogLevel, type Logger } from '../transport/log.ts';
import { Faults, REQUEST_LOG_LIMIT, Router, type RecordedRequest, type Status5xxFault } from './http.ts';
import { DEFAULT_TOKENS, RegistryState } from './registry.ts';
import { registryRoutes } from './registry-routes.ts';
import { uploadRoutes } from './registry-versions.ts';
import { ProxyState, proxyRoutes, resultsListener, type ProxyStateOptions } from './proxy.ts';
import { CloudState, type ApiKeyConfig, type CloudOptions } from './cloud.ts';
import { cloudRoutes, missingRouteHint } from './cloud-routes.ts';
import type { Personality, PersonalityName } from './personality.ts';
import { attachCloudSocket, type CloudSocketServer } from './ws.ts';
import { V2State } from './v2/state.ts';
import { signedContentRoutes, v2Routes } from './v2/routes.ts';

// What a user of the emulator codes against: startEmulator, its options and handle, the
// credentials and seed facts to write tests with, the personalities, and the types of
// the state objects on the handle. The server plumbing (router, routes, wire helpers)
// stays inside.
export { DEFAULT_TOKENS, EMULATOR_TOKEN, MAX_PAGE_SIZE } from './registry.ts';
export { EMULATOR_PAT } from './registry.ts';
// The types of the state objects' members too, so that a library built on the emulator
// can declare what it returns (a type no entry exports cannot be named: issue 24).
export type { NodeFilter, RegistryState, StoredNode } from './registry.ts';
export type { InstallRecord, UploadSlot } from './registry.ts';
export type { Faults, FaultMatch, NextFaultOptions, QueuedFault, RecordedRequest, Status5xxFault } from './http.ts';
export { ACCELERATOR_VALUES, OS_VALUES, SEED_FACTS } from './seed.ts';
export type { ProxyShape, ProxyState, ProxyStateOptions, ProxyTask, TaskStatus, WebhookAttempt } from './proxy.ts';
export { DEFAULT_API_KEYS, EMULATOR_API_KEY, EXCEPTION_TYPES } from './cloud.ts';
export type { ApiKeyConfig, CloudEvent, CloudOptions, CloudState, FailSpec, Job, KeyMode, NodeOutput, OutputRef, RawFailure, SocketDropOptions, SocketFaults } from './cloud.ts';
export type { FileStore, FileStoreLimits, SignedTarget, StoredFile, UrlSigner } from './cloud-files.ts';
export type { JobEngine } from './cloud-jobs.ts';
// `NodeDefinition` at the root is the schema's (every field optional); this is the emulator's full one.
export type { NodeDefinition as EmulatorNodeDefinition, PromptNode, ValidatedPrompt } from './cloud-nodes.ts';
export type { RecordClock } from './cloud-records.ts';
export { LOCAL_LANE, PERSONALITIES } from './personality.ts';
export { makePng } from './cloud-files.ts';
export type { Personality, PersonalityName } from './personality.ts';
export type { CloudSocketServer } from './ws.ts';
export type { V2State, V2Counters, V2Faults, V2JobRecord, V2OutputEntry, V2Frame } from './v2/state.ts';
export type { AssetRecord, AssetStore, BlobRef } from './v2/assets.ts';
// The v2 behaviours are reachable as PERSONALITIES.v2.v2 and PERSONALITIES['v2-real'].v2 (no new runtime export).
export type { V2Behaviour } from './v2/behaviour.ts';

/** Options of {@link startEmulator}. */
export interface EmulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1`. */
  host?: string;
  /**
   * Bearer token → publisher ids it may act on (`'*'` = every publisher).
   * Default {@link DEFAULT_TOKENS}: `emulator-token` for all, and
   * `<publisherId>-token` for each seeded publisher.
   */
  tokens?: Record<string, readonly string[]>;
  /** Load the deterministic seed data (default true). */
  seed?: boolean;
  /** Initial `faults.latencyMs`. */
  latencyMs?: number;
  /** Initial fault switches; `seed` seeds the PRNG of probabilistic faults. */
  faults?: { latencyMs?: number; status5xx?: Status5xxFault | null; seed?: number };
  /**
   * The server the cloud service imitates: `cloud` (default; the live service,
   * `/api/jobs` included), `spec` (only what `cloud.md` documents: no
   * `/api/jobs`) or `local` (a self-hosted server: no API key, one shared
   * queue, `/history`, bare routes),
   * `v2` (Comfy API v2 as published, `/api/v2/*`, Bearer keys) or `v2-real`
   * (Comfy API v2 as the real local server answers: `spec/cloud-v2.md` §9.7),
   * or a {@link Personality} object, e.g. `{ ...PERSONALITIES.local, jobsApi: false }`.
   * Wins over `cloud.personality`. Exposed as `emulator.cloud.personality`.
   */
  personality?: PersonalityName | Personality;
  /** Cloud API keys; default {@link DEFAULT_API_KEYS} (`emulator-key`, `ok`, 2 in parallel). */
  apiKeys?: Record<string, ApiKeyConfig>;
  /**
   * Cloud knobs (all later changeable on `emulator.cloud`): `stepMs` (30),
   * `progressSteps` (3), `parallel` (2), `maxUploadBytes` (100 MiB; `Infinity`
   * for none), `retainUploadBytes` (8 MiB), `viewMode` and `outputsDelayMs`
   * (the personality's), `signedUrlTtlMs` (60000), `historyLimit` (1000),
   * `storeBytes` (256 MiB), `seed`, and `personality`.
   */
  cloud?: Omit<CloudOptions, 'apiKeys'>;
  /**
   * Proxy knobs (all later changeable on `emulator.proxy`): `stepMs` (50),
   * `webhookTimeoutMs` (2000), `shape` of the status GETs (`'wrapped'` or
   * `'bare'`), `notFoundPolls` (0). Its tokens are the registry's; its result
   * URLs point at the emulator's own result server (`resultsUrl`).
   */
  proxy?: Omit<ProxyStateOptions, 'tokens' | 'resultsOrigin'>;
  /**
   * How much the emulator logs: `debug` is a line per request and socket,
   * `info` the start, `error` a handler that crashed. Default `'warn'`.
   * Unlike the clients, it does not read `PLATFORMUI_LOG` (a client's trace
   * stays the client's); the command takes `--log-level`.
   */
  logLevel?: LogLevel;
  /** Where lines go. Default `console`. */
  logger?: Logger;
}

const EMULATOR_OPTIONS = {
  port: 1,
  host: 1,
  tokens: 1,
  seed: 1,
  latencyMs: 1,
  faults: 1,
  personality: 1,
  apiKeys: 1,
  cloud: 1,
  proxy: 1,
  logLevel: 1,
  logger: 1,
} as const satisfies OptionKeys<EmulatorOptions>;
const EMULATOR_CLOUD_OPTIONS = {
  personality: 1,
  stepMs: 1,
  progressSteps: 1,
  parallel: 1,
  maxUploadBytes: 1,
  retainUploadBytes: 1,
  storeBytes: 1,
  viewMode: 1,
  outputsDelayMs: 1,
  signedUrlTtlMs: 1,
  historyLimit: 1,
  seed: 1,
  lateDeletes: 1,
  ignoreInterrupts: 1,
} as const satisfies OptionKeys<NonNullable<EmulatorOptions['cloud']>>;
const EMULATOR_PROXY_OPTIONS = { stepMs: 1, webhookTimeoutMs: 1, now: 1, shape: 1, notFoundPolls: 1 } as const satisfies OptionKeys<NonNullable<EmulatorOptions['proxy']>>;
const EMULATOR_FAULTS_OPTIONS = { latencyMs: 1, status5xx: 1, seed: 1 } as const satisfies OptionKeys<NonNullable<EmulatorOptions['faults']>>;

/** A running emulator. */
export interface Emulator {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** The registry's in-memory state. */
  readonly registry: RegistryState;
  /** The proxy's tasks and knobs. */
  readonly proxy: ProxyState;
  /**
   * Origin of the proxy's result server (e.g. `http://127.0.0.1:41235`), a
   * second loopback port where `generated` URLs point; it refuses any request
   * carrying credentials and logs every request in `proxy.resultRequests`.
   * Same as `proxy.resultsOrigin`.
   */
  readonly resultsUrl: string;
  /** The result server. */
  readonly resultsServer: Server;
  /** The cloud's keys, jobs, files and socket fault switches. */
  readonly cloud: CloudState;
  /**
   * The Comfy API v2 server's jobs, assets, fault switches
   * (`v2.faults`) and counters (`v2.counters`); undefined unless the
   * personality is a v2 one (`v2`, `v2-real`, or one with a `v2` member).
   */
  readonly v2: V2State | undefined;
  /** The cloud WebSocket server (`/ws`). */
  readonly sockets: CloudSocketServer;
  /** Mutable fault switches applied to every service. */
  readonly faults: Faults;
  /** Bounded log (last 1000) of received requests; clear with `requests.length = 0`. */
  readonly requests: RecordedRequest[];
  /** The underlying server (e.g. to attach more listeners). */
  readonly server: Server;
  /** Stops listening (main and result servers), stops every job and task timer, and closes every connection: keep-alive ones and WebSockets (1001) included. */
  close(): Promise<void>;
}

/**
 * Starts an emulator and resolves once it listens. Its cloud imitates the
 * live service (`personality: 'cloud'`) unless told otherwise; a route the
 * chosen personality lacks answers 404 naming the personalities that serve it.
 *
 * @example
 * ```ts
 * const emulator = await startEmulator(); // 127.0.0.1, a free port, personality 'cloud'
 * const cloud = new CloudClient({ baseUrl: emulator.url, apiKey: EMULATOR_API_KEY });
 * console.log((await cloud.listJobs()).jobs.length);
 * await emulator.close();
 * ```
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  checkOptions(options, EMULATOR_OPTIONS, 'startEmulator()');
  checkOptions(options.cloud, EMULATOR_CLOUD_OPTIONS, 'startEmulator() cloud', 'cloud.');
  checkOptions(options.proxy, EMULATOR_PROXY_OPTIONS, 'startEmulator() proxy', 'proxy.');
  checkOptions(options.faults, EMULATOR_FAULTS_OPTIONS, 'startEmulator() faults', 'faults.');
  const host = options.host ?? '127.0.0.1';
  const faults = new Faults({
    ...options.faults,
    latencyMs: options.latencyMs ?? options.faults?.latencyMs ?? 0,
  });
  const tokens = options.tokens ?? DEFAULT_TOKENS;
  const registry = new RegistryState({ tokens, seed: options.seed ?? true });
  const proxy = new ProxyState({ ...options.proxy, tokens: Object.keys(tokens) });
  const cloud = new CloudState({
    ...options.cloud,
    ...(options.apiKeys ? { apiKeys: options.apiKeys } : {}),
    ...(options.personality ? { personality: options.personality } : {}),
  });
  // Its own keys and tokens are scrubbed from every line, wherever they would appear.
  const log = createLog(options, () => [...Object.keys(tokens), ...cloud.keys.keys()], { prefix: '[platformui emulator]', env: false });
  const v2 = cloud.personality.v2 ? new V2State(cloud, cloud.personality.v2) : undefined;
  const router = new Router(faults, REQUEST_LOG_LIMIT, log).add(registryRoutes(registry)).add(proxyRoutes(proxy)).add(v2 ? v2Routes(v2) : cloudRoutes(cloud)).explainMissing(missingRouteHint(cloud.personality));
  const server = createServer(router.listener);
  const sockets = attachCloudSocket(server, cloud, log);
  const resultsServer = createServer(resultsListener(proxy, log, [...uploadRoutes(registry), ...(v2 ? signedContentRoutes(v2) : [])]));

  try {
    await listen(server, options.port ?? 0, host);
    // Its own port on the same interface: another origin, as the live result host is.
    await listen(resultsServer, 0, host);
  } catch (err) {
    // e.g. EADDRINUSE: nothing may keep running.
    proxy.close();
    v2?.close();
    cloud.close();
    void sockets.close();
    if (server.listening) server.close();
    server.closeAllConnections();
    throw err;
  }

  const port = (server.address() as AddressInfo).port;
  const resultsUrl = `http://${urlHost(host)}:${(resultsServer.address() as AddressInfo).port}`;
  proxy.resultsOrigin = resultsUrl;
  registry.uploadOrigin = resultsUrl;
  if (v2) v2.resultsOrigin = resultsUrl;
  log.info?.(`listening on http://${urlHost(host)}:${port} (results on ${resultsUrl}; cloud personality ${cloud.personality.name})`, { url: `http://${urlHost(host)}:${port}`, resultsUrl, personality: cloud.personality.name });
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost(host)}:${port}`,
    port,
    host,
    registry,
    proxy,
    resultsUrl,
    resultsServer,
    cloud,
    v2,
    sockets,
    faults,
    requests: router.requests,
    server,
    close() {
      closing ??= (async () => {
        proxy.close();
        v2?.close();
        cloud.close();
        // Upgraded sockets are not HTTP connections any more: closeAllConnections() misses them.
        const socketsClosed = sockets.close();
        const closeServer = (s: Server) =>
          new Promise<void>((resolve, reject) => {
            s.close((err) => (err ? reject(err) : resolve()));
            // Without this, idle keep-alive sockets of clients hold close() open.
            s.closeAllConnections();
          });
        await Promise.all([closeServer(server), closeServer(resultsServer)]);
        await socketsClosed;
      })();
      return closing;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function urlHost(host: string): string {
  // A wildcard bind is reachable on loopback; name that, not the wildcard.
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
