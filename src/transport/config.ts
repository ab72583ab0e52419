/**
 * What a client configures its transport with, once.
 *
 * @module
 */
import type { ClientOptions, Credential } from './options.ts';
import type { ServiceKind } from './to-error.ts';

/** How a client authenticates when an endpoint asks for it. */
export type AuthScheme = 'bearer' | 'apiKey';

/** What one client configures once. */
export interface TransportConfig {
  service: ServiceKind;
  /** Client-wide options. */
  options: ClientOptions;
  /** Environment variable that supplies the base URL when the options do not (Node only). */
  baseUrlEnv: string;
  credential: Credential | undefined;
  /** Environment variable that supplies the credential when the options do not (Node only); none when absent. */
  credentialEnv?: string | undefined;
  authScheme: AuthScheme;
  /** Name of the credential option, for error messages (`'token'`, `'apiKey'`). */
  credentialName: string;
  /** Without a configured credential, authenticated endpoints are sent without one (a local server) instead of failing. */
  credentialOptional?: boolean;
  /** Appended to the missing-credential message (e.g. how to reach a local server instead). */
  credentialHint?: string;
  /** Appended to a 401 answering a request sent without a credential (none configured, `credentialOptional`): how to send one. */
  noCredentialHint?: string;
}

/** Where the registry and the proxy (one service, `{base_url}`) find their URL and Bearer token. */
export const BEARER_SERVICE = {
  baseUrlEnv: 'PLATFORMUI_BASE_URL',
  credentialEnv: 'PLATFORMUI_TOKEN',
  authScheme: 'bearer',
  credentialName: 'token',
} as const;
