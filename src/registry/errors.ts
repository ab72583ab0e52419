/**
 * The registry's own error: a node version created whose archive did not
 * reach its signed URL. The root entry exports it under the same name.
 *
 * @module
 */
import { PlatformUIError } from '../errors.ts';
import type { NodeVersion } from '../schemas/registry.ts';

/**
 * The version was created but its archive did not reach the signed URL.
 * Posting again would be refused as a duplicate: retry the upload alone with
 * `registry.uploadNodeVersionArchive(err.signedUrl, archive)`.
 * (`signedUrl` is not enumerable, so logging the error does not show it.)
 */
export class NodeVersionUploadError extends PlatformUIError {
  static override name = 'NodeVersionUploadError';
  /** The version the registry created. */
  readonly nodeVersion: NodeVersion;
  declare readonly signedUrl: string;
  constructor(nodeVersion: NodeVersion, signedUrl: string, cause: unknown) {
    super(
      `Version ${nodeVersion.version ?? '?'} was created, but uploading its archive failed (${cause instanceof Error ? cause.message : String(cause)}); retry the upload alone with registry.uploadNodeVersionArchive(err.signedUrl, archive): publishing again would be refused as a duplicate`,
      { cause },
    );
    this.nodeVersion = nodeVersion;
    Object.defineProperty(this, 'signedUrl', { value: signedUrl, enumerable: false });
  }
}
