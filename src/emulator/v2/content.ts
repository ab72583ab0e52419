/**
 * Bytes of a v2 asset, with `Range` (`bytes=a-b`, `bytes=a-`, `bytes=-n`):
 * 200 or 206 with `Content-Range`, `Accept-Ranges: bytes`; a range that
 * starts past the end is 416 (spec) or 502 `upstream_error` (the real
 * server). Served from `/api/v2/assets/{id}/content` (inline) and from the
 * signed URL on the result host.
 *
 * @module
 */
import type { StoredFile } from '../cloud-files.ts';
import type { RequestContext } from '../http.ts';
import { V2Error } from './errors.ts';
import type { V2State } from './state.ts';

/** Answers with the file's bytes (the range asked for). */
export async function serveContent(state: V2State, ctx: RequestContext, file: StoredFile): Promise<void> {
  if (!file.data) {
    // Synthetic files (benchmarks) stream whole; uploads above the retain limit kept no bytes.
    if (file.synthetic) return state.cloud.files.serve(ctx.req, ctx.res, file);
    throw new V2Error(404, 'content_unavailable', `The bytes of ${file.name} were not kept (above the emulator's retain limit).`);
  }
  const size = file.data.length;
  const headers: Record<string, string> = { 'Content-Type': file.contentType, 'Accept-Ranges': 'bytes', 'Cache-Control': 'no-store' };
  const range = ctx.headers.range;
  let start = 0;
  let end = size - 1;
  let status = 200;
  const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
  if (m && (m[1] !== '' || m[2] !== '')) {
    if (m[1] === '') {
      start = Math.max(0, size - Number(m[2]));
    } else {
      start = Number(m[1]);
      end = m[2] === '' ? size - 1 : Math.min(size - 1, Number(m[2]));
    }
    if (start >= size || start > end) {
      if (state.behaviour.rangePastEnd === 502) throw new V2Error(502, 'upstream_error', 'Upstream answered 416 Range Not Satisfiable.');
      throw new V2Error(416, 'range_not_satisfiable', `Range ${range} is past the end (${size} bytes).`, null, { 'Content-Range': `bytes */${size}` });
    }
    status = 206;
    headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  }
  const body = file.data.subarray(start, end + 1);
  ctx.res.writeHead(status, { ...headers, 'Content-Length': String(body.length) });
  ctx.res.end(ctx.method === 'HEAD' ? undefined : body);
}
