/**
 * Uploads to the cloud and a local server: a file as a multipart form
 * (`POST /api/upload/image`, `/api/upload/mask`), streamed, never read whole
 * into memory. (Comfy API v2's content-addressed assets: `v2/assets.ts`.)
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.ts';
import { platform } from '../platform/node.ts';
import type { UploadResponse } from '../schemas/cloud.ts';
import * as rules from '../schemas/rules.generated.ts';
import type { RequestOptions } from '../transport/options.ts';
import type { WithResponse } from '../transport/promise.ts';
import type { RequestBody, Transport } from '../transport/transport.ts';
import { checkArgsLater } from '../args.ts';
import type { UploadInput, UploadMaskOptions } from './client-options.ts';

/**
 * Sends `file` with `fields` as a multipart form to `path`; `fields` is
 * called first (it checks the options), so nothing is read before they pass.
 *
 * @example
 * ```ts
 * await uploadForm(transport, 'api/upload/image', './in.png', {}, () => ({ type: 'input' }));
 * ```
 */
export async function uploadForm(transport: Transport, path: string, file: UploadInput, options: RequestOptions & { filename?: string }, fields: () => Record<string, string>): Promise<WithResponse<UploadResponse>> {
  const { body, headers } = await multipart(file, fields(), options.filename);
  return transport.request<UploadResponse>({ method: 'POST', path, body, headers, auth: true, schema: rules.UploadResponse, options, fetch: platform.uploadFetch });
}

/**
 * `POST /api/upload/mask`: `file` as the mask of `options.originalRef` (checked first), sent with `type=input` and the
 * JSON-encoded `original_ref`.
 *
 * @example
 * ```ts
 * await uploadMask(transport, './mask.png', { originalRef: { filename: 'in.png', subfolder: '', type: 'input' } });
 * ```
 */
export async function uploadMask(transport: Transport, file: UploadInput, options: UploadMaskOptions): Promise<WithResponse<UploadResponse>> {
  const ref = await checkArgsLater(rules.FileRef, options?.originalRef, 'originalRef');
  return uploadForm(transport, 'api/upload/mask', file, options, () => ({ type: 'input', subfolder: ref.subfolder ?? '', original_ref: JSON.stringify(ref) }));
}

async function multipart(file: UploadInput, fields: Record<string, string>, filename?: string): Promise<{ body: RequestBody; headers: Record<string, string> }> {
  if (typeof file === 'string') {
    const blob = await platform.fileBlob(file);
    return formData(fields, blob, filename ?? file.split(/[\\/]/).pop() ?? 'upload.bin');
  }
  if (file instanceof Blob) return formData(fields, file, filename ?? (file as File).name ?? 'upload.bin');
  if (file instanceof Uint8Array || file instanceof ArrayBuffer) return formData(fields, new Blob([file as BlobPart]), filename ?? 'upload.bin');
  if (file instanceof ReadableStream || platform.isNodeReadable(file)) return platform.streamMultipart(fields, 'image', file, filename ?? 'upload.bin');
  throw new InvalidArgumentError('must be a Blob, File, Uint8Array, ArrayBuffer, ReadableStream, Node Readable or (Node) a file path', 'file');
}

function formData(fields: Record<string, string>, blob: Blob, filename: string) {
  const form = new FormData();
  form.append('image', blob, filename || 'upload.bin');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return { body: form, headers: {} };
}
