/**
 * Publishing a node version (`RegistryClient.publishNodeVersion` and
 * `uploadNodeVersionArchive`): loaded on first use, since most apps only
 * read the registry. The client hands in its transport (its retries, its
 * secrets to scrub) and its own `uploadNodeVersionArchive`.
 *
 * @module
 */
import { checkArgs, checkId } from '../args.ts';
import { InvalidArgumentError } from '../errors.ts';
import { NodeVersionUploadError } from './errors.ts';
import { platform } from '../platform/node.ts';
import type { CreateNodeRequest, NodeVersion } from '../schemas/registry.ts';
import * as rules from '../schemas/rules.generated.ts';
import { checkRequestOptions, type RequestOptions } from '../transport/options.ts';
import { path } from '../transport/path.ts';
import type { WithResponse } from '../transport/promise.ts';
import type { Transport } from '../transport/transport.ts';
import { isSemver } from './semver.ts';
import { nullArraysToEmpty } from './wire.ts';

/** What {@link RegistryClient.publishNodeVersion} takes. */
export interface PublishNodeVersionParams {
  publisherId: string;
  nodeId: string;
  /** The publisher's personal access token: sent in the body only, never shown in an error or a log line. */
  personalAccessToken: string;
  /** The node's metadata (as in `createNode`). */
  node: CreateNodeRequest;
  /** The version to create: `version` at least. */
  nodeVersion: NodeVersion & { version: string };
  /** The archive (a zip): bytes, a Blob, a web stream, or (in Node) a file path. */
  archive: Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | string;
}

/** {@link RegistryClient.publishNodeVersion}: the version created, once its archive is uploaded (`upload`). */
export async function publishNodeVersion(
  transport: Transport,
  params: PublishNodeVersionParams,
  options: RequestOptions | undefined,
  upload: (signedUrl: string, archive: Blob | ReadableStream<Uint8Array>) => Promise<void>,
): Promise<WithResponse<NodeVersion>> {
  const { publisherId, nodeId, personalAccessToken, node, nodeVersion, archive } = params ?? ({} as PublishNodeVersionParams);
  checkId(publisherId, 'publisherId');
  checkId(nodeId, 'nodeId');
  if (typeof personalAccessToken !== 'string' || personalAccessToken === '') throw new InvalidArgumentError('is required', 'personalAccessToken');
  transport.rememberSecret(personalAccessToken);
  const body = checkArgs(rules.CreateNodeRequest, node, 'node');
  if (typeof nodeVersion?.version !== 'string' || !isSemver(nodeVersion.version)) throw new InvalidArgumentError('must be a semantic version like 1.2.3', 'nodeVersion.version');
  checkRequestOptions(options, 'publishNodeVersion()');
  const blob = await archiveBody(archive);
  const r = await transport.request<{ signedUrl: string; node_version: NodeVersion }>({
    method: 'POST',
    path: path`publishers/${publisherId}/nodes/${nodeId}/versions`,
    json: { personal_access_token: personalAccessToken, node: body, node_version: nodeVersion },
    auth: false,
    normalize: nullArraysToEmpty,
    schema: rules.PublishNodeVersionResponse,
    options,
    paid: true,
  });
  try {
    await upload(r.data.signedUrl, blob);
  } catch (err) {
    throw new NodeVersionUploadError(r.data.node_version, r.data.signedUrl, err);
  }
  return { data: r.data.node_version, response: r.response };
}

/** {@link RegistryClient.uploadNodeVersionArchive}: the archive `PUT` to its signed URL, with no credential. */
export async function uploadNodeVersionArchive(transport: Transport, signedUrl: string, archive: PublishNodeVersionParams['archive'], options?: RequestOptions): Promise<void> {
  if (typeof signedUrl !== 'string' || !URL.canParse(signedUrl) || !/^https?:$/.test(new URL(signedUrl).protocol)) throw new InvalidArgumentError('must be an absolute http(s) URL', 'signedUrl');
  checkRequestOptions(options, 'uploadNodeVersionArchive()');
  const res = await transport.fetchElsewhere(new URL(signedUrl), options, { method: 'PUT', body: await archiveBody(archive), headers: { 'content-type': 'application/zip' } });
  await res.body?.cancel();
}

/** The archive as a body: a Blob (bytes, a file) or the stream as given. */
async function archiveBody(archive: PublishNodeVersionParams['archive']): Promise<Blob | ReadableStream<Uint8Array>> {
  if (typeof archive === 'string') return platform.fileBlob(archive);
  if (archive instanceof Blob || archive instanceof ReadableStream) return archive;
  if (archive instanceof Uint8Array || archive instanceof ArrayBuffer) return new Blob([archive as BlobPart], { type: 'application/zip' });
  throw new InvalidArgumentError('must be bytes, a Blob, a ReadableStream or (in Node) a file path', 'archive');
}
