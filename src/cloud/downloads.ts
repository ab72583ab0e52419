/**
 * Downloads from the cloud and a local server: `GET /api/view`, whose
 * redirect to a signed URL is followed here without the API key (a local
 * server answers with the file itself). (Comfy API v2: `v2/assets.ts`.)
 * And, in Node, a download of any kind of server saved to a file.
 *
 * @module
 */
import { platform } from '../platform/node.ts';
import type { FileRef } from '../schemas/cloud.ts';
import type { RequestOptions } from '../transport/options.ts';
import type { Transport } from '../transport/transport.ts';
import { followSigned } from './signed.ts';

/**
 * The output's `Response` (its body streams), fetched through `/api/view`.
 *
 * @example
 * ```ts
 * const res = await downloadView(transport, { filename: 'out.png', subfolder: '', type: 'output' }, {});
 * ```
 */
export async function downloadView(transport: Transport, ref: FileRef, options: RequestOptions): Promise<Response> {
  const query = { filename: ref.filename, subfolder: ref.subfolder ?? '', type: ref.type ?? 'output' };
  const res = await transport.send({ method: 'GET', path: 'api/view', query, auth: true, redirect: 'manual', options });
  // A local counterpart server answers 200 with the file itself, from its own origin.
  return followSigned(transport, res, '/api/view', new URL(`${transport.baseUrl}/api/view`), options);
}

/**
 * Node only: the body of a download written to `destination`, streaming; resolves with the number of bytes written
 * (0 for a response without a body).
 *
 * @example
 * ```ts
 * await saveToFile(await cloud.download(file), './out.png');
 * ```
 */
export async function saveToFile(response: Response, destination: string): Promise<number> {
  return response.body ? platform.saveToFile(response.body, destination) : 0;
}
