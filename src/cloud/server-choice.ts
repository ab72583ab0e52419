/**
 * Which server a `CloudClient` talks to, chosen once from its options: the
 * kind (`cloud`, `local`, `v2`), the transport with that kind's auth, the
 * protocol (status, records, stopping) and the backend (uploads, downloads,
 * submission, job list) of that kind. A further kind of server is one more
 * protocol and backend here, not a branch in the client's methods.
 *
 * @module
 */
import { checkOptions } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import { fromEnv } from '../transport/options.ts';
import { Transport } from '../transport/transport.ts';
import { CLOUD_CLIENT_OPTIONS, type CloudClientOptions } from './client-options.ts';
import type { ServerKind, ServerProtocol } from './protocol/types.ts';
import { v1Protocol } from './protocol/v1.ts';
import { v2Protocol } from './protocol/v2.ts';
import { isLoopback } from './signed.ts';
import type { V2Backend } from './v2/backend.ts';
import { v1Backend, v2Door, type Backend } from './backend.ts';

const SERVER_KINDS = new Set(['auto', 'cloud', 'local', 'v2']);

/** A client's server: what {@link chooseServer} decides. */
export interface ChosenServer {
  server: ServerKind;
  transport: Transport;
  protocol: ServerProtocol;
  /** Comfy API v2's code, loaded on first use (only a `server: 'v2'` client has it). */
  v2: (() => Promise<V2Backend>) | undefined;
  /** Uploads, downloads, submission and the job list of this kind. */
  backend: Backend;
}

/** The kind of server the options name: `keyless` is the cloud behind a relay; `auto` is local for a loopback URL without a key. */
function serverKind(options: CloudClientOptions, baseUrl: string | undefined): ServerKind {
  const server = options.server ?? 'auto';
  if (server === 'v2') return 'v2';
  if (options.keyless || server === 'cloud') return 'cloud';
  if (server === 'local') return 'local';
  // The environment's key goes with the environment's URL: a key kept for the cloud
  // must not make an explicitly given loopback server "the cloud", nor be sent to it.
  const hasKey = options.apiKey !== undefined || (options.baseUrl === undefined && fromEnv('PLATFORMUI_API_KEY') !== undefined);
  const host = baseUrl && URL.canParse(baseUrl) ? new URL(baseUrl).hostname : '';
  return !hasKey && isLoopback(host) ? 'local' : 'cloud';
}

/**
 * The server of a client's options (checked first: their names, `server`,
 * `keyless` with `apiKey`, `objectInfo`).
 *
 * @example
 * ```ts
 * const { server, transport, protocol } = chooseServer({ baseUrl: 'http://127.0.0.1:8188' }); // server 'local'
 * ```
 */
export function chooseServer(options: CloudClientOptions): ChosenServer {
  checkOptions(options, CLOUD_CLIENT_OPTIONS, 'CloudClient');
  const chosen = options.server ?? 'auto';
  if (!SERVER_KINDS.has(chosen)) throw new InvalidArgumentError("must be 'auto', 'cloud' or 'local'", 'server');
  if (options.keyless && options.apiKey !== undefined) throw new InvalidArgumentError('a keyless client takes no apiKey: the relay in front of the cloud adds it', 'apiKey');
  const url = options.baseUrl ?? fromEnv('PLATFORMUI_CLOUD_URL');
  const server = serverKind(options, url);
  const v2 = server === 'v2';
  if (options.objectInfo !== undefined && (typeof options.objectInfo !== 'string' || !URL.canParse(options.objectInfo)) && (typeof options.objectInfo !== 'object' || options.objectInfo === null || Array.isArray(options.objectInfo))) {
    throw new InvalidArgumentError('must be an object_info object or the http(s) URL of a server that serves /api/object_info', 'objectInfo');
  }
  const transport = new Transport({
    service: v2 ? 'v2' : 'cloud',
    options,
    baseUrlEnv: 'PLATFORMUI_CLOUD_URL',
    credential: options.keyless ? undefined : options.apiKey,
    credentialEnv: server === 'local' || options.keyless ? undefined : 'PLATFORMUI_API_KEY',
    authScheme: v2 ? 'bearer' : 'apiKey',
    credentialName: 'apiKey',
    // comfy-api-proxy takes no key by default and refuses a non-loopback bind without one.
    credentialOptional: server === 'local' || options.keyless === true || (v2 && url !== undefined && URL.canParse(url) && isLoopback(new URL(url).hostname)),
    credentialHint: chosen === 'cloud' ? '' : " (a self-hosted server needs none: use a loopback baseUrl or pass server: 'local')",
    // A keyless client's relay adds the key: a 401 there is the relay's own refusal.
    noCredentialHint:
      server === 'local' && !options.keyless
        ? `no API key was sent (${chosen === 'local' ? "server: 'local'" : 'a loopback baseUrl without apiKey is taken for a local server'}, and PLATFORMUI_API_KEY goes only with PLATFORMUI_CLOUD_URL): to send one, pass apiKey, and server: 'cloud' if this is the cloud`
        : undefined,
  });
  if (v2) {
    const protocol = v2Protocol(transport);
    return { server, transport, protocol, v2: protocol.backend, backend: v2Door(protocol.backend) };
  }
  const protocol = v1Protocol(server, transport);
  // Whether this server uses the job ids it is sent: unknown until it has answered a submission (per client).
  return { server, transport, protocol, v2: undefined, backend: v1Backend({ transport, protocol, honoursIds: { value: undefined } }) };
}
