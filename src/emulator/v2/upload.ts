/**
 * The multipart body of `POST /api/v2/assets`, streamed: the `file` part is
 * hashed with BLAKE3 and counted as it arrives (any part order: the real
 * server takes the file first or last), plain fields collected (`tags`
 * repeated). Uses the cloud's multipart parser.
 *
 * @module
 */
import type { RequestContext } from '../http.ts';
import { boundaryOf, MultipartParser } from '../cloud-multipart.ts';
import { createBlake3 } from './blake3.ts';
import { V2Error } from './errors.ts';
import type { V2State } from './state.ts';

/** A parsed upload. */
export interface V2Upload {
  fields: Record<string, string>;
  tags: string[];
  file: { filename: string; contentType: string | undefined; size: number; hash: `blake3:${string}`; data: Buffer | undefined };
}

/** Largest plain field, bytes. */
const MAX_FIELD = 64 * 1024;
/** After a refusal, this much of the rest is still read so the client sees the answer. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

/** Reads and hashes an upload; counts its file bytes in `counters.uploadBytes`. Throws {@link V2Error} 400/413. */
export async function readV2Upload(state: V2State, ctx: RequestContext): Promise<V2Upload> {
  const boundary = boundaryOf(ctx.headers['content-type']);
  if (!boundary) throw new V2Error(422, 'invalid_request', 'Expected a multipart/form-data body.');
  const hasher = await createBlake3();
  const max = state.cloud.maxUploadBytes;
  const retain = state.cloud.retainUploadBytes;
  const fields: Record<string, string> = {};
  const tags: string[] = [];
  let file: V2Upload['file'] | undefined;
  const parser = new MultipartParser(boundary, (part) => {
    if (part.name === 'file' && part.filename !== undefined) {
      if (file) throw new V2Error(422, 'invalid_request', "More than one 'file' part.");
      const current: V2Upload['file'] = { filename: part.filename, contentType: part.contentType, size: 0, hash: 'blake3:', data: undefined };
      file = current;
      let kept: Buffer[] | undefined = [];
      return {
        write(chunk) {
          current.size += chunk.length;
          state.counters.uploadBytes += chunk.length;
          if (current.size > max) throw new V2Error(413, 'payload_too_large', `The file exceeds the upload limit of ${max} bytes.`);
          hasher.update(chunk);
          if (kept && current.size <= retain) kept.push(chunk);
          else kept = undefined;
        },
        end() {
          current.hash = hasher.digest();
          current.data = kept ? Buffer.concat(kept) : undefined;
        },
      };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    return {
      write(chunk) {
        size += chunk.length;
        if (size > MAX_FIELD) throw new V2Error(422, 'invalid_request', `Field '${part.name}' exceeds ${MAX_FIELD} bytes.`);
        chunks.push(chunk);
      },
      end() {
        const value = Buffer.concat(chunks).toString('utf8');
        if (part.name === 'tags' || part.name === 'tags[]') tags.push(value);
        else fields[part.name] = value;
      },
    };
  });
  let failure: unknown;
  let drained = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    if (failure !== undefined) {
      drained += chunk.length;
      if (drained > DRAIN_LIMIT) {
        ctx.res.setHeader('Connection', 'close');
        break;
      }
      continue;
    }
    try {
      parser.write(chunk);
    } catch (err) {
      failure = err;
    }
  }
  if (failure === undefined && !parser.done) failure = new V2Error(422, 'invalid_request', 'Malformed multipart body: it ends before the closing boundary.');
  if (failure !== undefined) throw failure;
  if (!file) throw new V2Error(422, 'invalid_request', "Missing the 'file' part.");
  return { fields, tags, file };
}
