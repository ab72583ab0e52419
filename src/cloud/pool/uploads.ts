/**
 * A pool job's input files: checked when the job is handed over, read and
 * hashed once per job, uploaded once per server and content, and named in
 * the workflow the server runs.
 *
 * @module
 */
import { platform } from '../../platform/node.ts';
import type { UploadResponse, Workflow } from '../../schemas/cloud.ts';
import { splitInputPath, uploadValue } from '../inputs.ts';
import type { CloudClient } from '../client.ts';
import type { PoolInput } from './types.ts';

/** One input, read: where it goes in the workflow, and its content. */
export interface InputFile {
  nodeId: string;
  input: string;
  blob: Blob;
  /** SHA-256 of the content, hex: the key of the server's uploads. */
  hash: string;
  /** The file name's extension, kept in the uploaded name (`.png` when unknown). */
  extension: string;
}

/** What uploading needs of a server: its client, and its uploads by content hash (cleared when it goes down). */
export interface UploadTarget {
  client: CloudClient;
  uploads: Map<string, Promise<UploadResponse>>;
}

/** Reads and hashes a job's inputs (checked by `checkInputs()`, `cloud/inputs.ts`): once per job, whatever servers it goes to. */
export function readInputs(inputs: Record<string, PoolInput>): Promise<InputFile[]> {
  return Promise.all(
    Object.entries(inputs).map(async ([at, file]) => {
      const [nodeId, input] = splitInputPath(at)!;
      const blob = typeof file === 'string' ? await platform.fileBlob(file) : file instanceof Blob ? file : new Blob([file as BlobPart]);
      return { nodeId, input, blob, hash: await sha256(blob), extension: extensionOf(file) };
    }),
  );
}

/**
 * `workflow` (copied) with its inputs uploaded to `server` and their names
 * set. Each content is uploaded once per server: jobs with the same bytes
 * share the upload, so no one job's `signal` stops it (the job stops waiting).
 */
export async function uploadInputs(workflow: Workflow, files: readonly InputFile[], server: UploadTarget, signal: AbortSignal): Promise<Workflow> {
  const copy = structuredClone(workflow);
  await Promise.all(
    files.map(async ({ nodeId, input, blob, hash, extension }) => {
      let upload = server.uploads.get(hash);
      if (!upload) {
        upload = Promise.resolve(server.client.uploadImage(blob, { filename: `${hash.slice(0, 16)}${extension}` }));
        server.uploads.set(hash, upload);
        upload.catch(() => server.uploads.get(hash) === upload && server.uploads.delete(hash));
      }
      const ref = await untilAborted(upload, signal);
      (copy[nodeId]!.inputs as Record<string, unknown>)[input] = uploadValue(ref);
    }),
  );
  return copy;
}

/** `promise`, or a rejection with the signal's reason once it aborts (the promise itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function sha256(blob: Blob): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}

function extensionOf(file: PoolInput): string {
  const name = typeof file === 'string' ? file : file instanceof Blob ? ((file as File).name ?? '') : '';
  const m = /\.[A-Za-z0-9]{1,8}$/.exec(name);
  return m ? m[0].toLowerCase() : '.png';
}
