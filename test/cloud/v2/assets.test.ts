// The upload logic of src/cloud/v2/assets.ts against msw: which requests go out, in which
// order, with which parts, and what comes back (bytesSent, via, typed errors).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { afterAll, describe, expect, it } from 'vitest';
import { interceptHttp } from '../../helpers/msw.ts';
import { Transport } from '../../../src/transport/transport.ts';
import { assetReference, deleteAsset, getAsset, hasAssetHash, uploadAsset } from '../../../src/cloud/v2/assets.ts';
import { blake3 } from '../../../src/cloud/v2/hash.ts';
import { ConflictError, InvalidArgumentError, NotFoundError } from '../../../src/errors.ts';

const BASE = 'http://v2.test';
const { server, seen } = interceptHttp();
const t = new Transport({ service: 'cloud', options: { baseUrl: BASE, retry: 0 }, baseUrlEnv: 'PLATFORMUI_CLOUD_URL', credential: 'k', authScheme: 'bearer', credentialName: 'apiKey', credentialOptional: true });
const dir = mkdtempSync(join(tmpdir(), 'v2-assets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const asset = (over: Record<string, unknown> = {}) => ({ id: 'a1', hash: null, size_bytes: 5, content_type: 'image/png', file_path: 'in.png', ...over });
const calls = () => seen.map((r) => `${r.method} ${new URL(r.url).pathname}`);

/** A server that has no blob (HEAD 404) and records the multipart parts of the upload, in order. */
function missThenUpload(status = 201) {
  const parts: [string, string | File][] = [];
  server.use(
    http.head(`${BASE}/api/v2/assets/by-hash/:hash`, () => new HttpResponse(null, { status: 404 })),
    http.post(`${BASE}/api/v2/assets`, async ({ request }) => {
      for (const [k, v] of await request.formData()) parts.push([k, v]);
      const file = parts.find(([k]) => k === 'file')?.[1] as File;
      const hash = (await blake3(new Uint8Array(await file.arrayBuffer()))).hash;
      return HttpResponse.json(asset({ hash, size_bytes: file.size, created_new: true }), { status });
    }),
  );
  return parts;
}

describe('uploadAsset()', () => {
  it('on a miss: HEAD by-hash, then one multipart POST, metadata parts first and the file last', async () => {
    const parts = missThenUpload();
    const bytes = new TextEncoder().encode('hello');
    const { hash } = await blake3(bytes);
    const r = await uploadAsset(t, bytes, { filename: 'in.png', tags: ['a', 'b'], expiresIn: 3600 });
    expect(calls()).toEqual([`HEAD /api/v2/assets/by-hash/${encodeURIComponent(hash)}`, 'POST /api/v2/assets']);
    expect(seen[0]!.headers.get('authorization')).toBe('Bearer k');
    expect(parts.map(([k]) => k)).toEqual(['file_path', 'content_type', 'expected_hash', 'tags', 'tags', 'expires_in', 'file']);
    expect(Object.fromEntries(parts.filter(([k]) => k !== 'file' && k !== 'tags'))).toEqual({ file_path: 'in.png', content_type: 'image/png', expected_hash: hash, expires_in: '3600' });
    expect(parts.filter(([k]) => k === 'tags').map(([, v]) => v)).toEqual(['a', 'b']);
    expect(r).toMatchObject({ bytesSent: 5, via: 'upload', data: { hash, created_new: true } });
    expect(r.response.status).toBe(201);
  });

  it('on a hit: from-hash with the hash and file_path, and 0 bytes of the file sent', async () => {
    const file = join(dir, 'photo.png');
    writeFileSync(file, 'bytes of a photo');
    const { hash } = await blake3(file);
    const bodies: unknown[] = [];
    server.use(
      http.head(`${BASE}/api/v2/assets/by-hash/:hash`, () => new HttpResponse(null, { status: 200 })),
      http.post(`${BASE}/api/v2/assets/from-hash`, async ({ request }) => (bodies.push(await request.json()), HttpResponse.json(asset({ hash, created_new: false }), { status: 200 }))),
    );
    const r = await uploadAsset(t, file, { tags: ['t1'] });
    expect(calls()).toEqual([`HEAD /api/v2/assets/by-hash/${encodeURIComponent(hash)}`, 'POST /api/v2/assets/from-hash']);
    expect(bodies).toEqual([{ hash, file_path: 'photo.png', tags: ['t1'] }]);
    expect(r).toMatchObject({ bytesSent: 0, via: 'from-hash', data: { id: 'a1', hash } });
  });

  it('from-hash 404 blob_not_found (the bytes went after the HEAD): the bytes are sent', async () => {
    const parts = missThenUpload();
    server.use(
      http.head(`${BASE}/api/v2/assets/by-hash/:hash`, () => new HttpResponse(null, { status: 200 })),
      http.post(`${BASE}/api/v2/assets/from-hash`, () => HttpResponse.json({ error: { code: 'blob_not_found', message: 'gone' } }, { status: 404 })),
    );
    const r = await uploadAsset(t, new Blob(['abc'], { type: 'text/plain' }));
    expect(calls().map((c) => c.split(' /api/v2/assets')[1]!.split('/')[1] ?? '')).toEqual(['by-hash', 'from-hash', '']);
    expect(parts.find(([k]) => k === 'content_type')?.[1]).toBe('text/plain');
    expect(r).toMatchObject({ bytesSent: 3, via: 'upload' });
  });

  it('409 hash_mismatch is a ConflictError carrying the envelope', async () => {
    server.use(
      http.head(`${BASE}/api/v2/assets/by-hash/:hash`, () => new HttpResponse(null, { status: 404 })),
      http.post(`${BASE}/api/v2/assets`, () => HttpResponse.json({ error: { code: 'hash_mismatch', message: 'expected_hash does not match' } }, { status: 409 })),
    );
    const err = await uploadAsset(t, new Uint8Array([1, 2, 3])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).error).toMatchObject({ code: 'hash_mismatch' });
  });

  it('a stream (web or Node) is sent without hashing and without expected_hash; its bytes are counted', async () => {
    for (const make of [() => new Blob(['0123456789']).stream(), () => Readable.from([Buffer.from('01234'), Buffer.from('56789')])]) {
      const parts = missThenUpload();
      seen.length = 0;
      const r = await uploadAsset(t, make(), { filename: 'clip.wav' });
      expect(calls()).toEqual(['POST /api/v2/assets']);
      expect(parts.map(([k]) => k)).toEqual(['file_path', 'content_type', 'file']);
      expect(parts[1]![1]).toBe('audio/wav');
      expect(r).toMatchObject({ bytesSent: 10, via: 'upload' });
    }
  });

  it('refuses bad options and inputs before any request', async () => {
    await expect(uploadAsset(t, new Uint8Array(1), { expiresIn: 10 })).rejects.toThrow(InvalidArgumentError);
    await expect(uploadAsset(t, new Uint8Array(1), { tags: [''] })).rejects.toThrow(InvalidArgumentError);
    await expect(uploadAsset(t, new Uint8Array(1), { filename: '' })).rejects.toThrow(InvalidArgumentError);
    await expect(uploadAsset(t, 7 as never)).rejects.toThrow(InvalidArgumentError);
    await expect(uploadAsset(t, join(dir, 'missing.png'))).rejects.toThrow(/no such file/);
    expect(seen).toEqual([]);
  });
});

describe('hasAssetHash(), getAsset(), deleteAsset(), assetReference()', () => {
  it('HEAD 200 → true, 404 and 405 → false, anything else throws', async () => {
    const h = `blake3:${'a'.repeat(64)}` as const;
    for (const [status, want] of [[200, true], [404, false], [405, false]] as const) {
      server.use(http.head(`${BASE}/api/v2/assets/by-hash/:hash`, () => new HttpResponse(null, { status })));
      expect(await hasAssetHash(t, h)).toBe(want);
    }
    server.use(http.head(`${BASE}/api/v2/assets/by-hash/:hash`, () => new HttpResponse(null, { status: 401 })));
    await expect(hasAssetHash(t, h)).rejects.toThrow(/401/);
    await expect(hasAssetHash(t, 'a'.repeat(64) as never)).rejects.toThrow(InvalidArgumentError);
  });

  it('getAsset and deleteAsset map 404 and 409 onto the SDK classes', async () => {
    server.use(
      http.get(`${BASE}/api/v2/assets/:id`, ({ params }) => (params.id === 'a1' ? HttpResponse.json(asset()) : HttpResponse.json({ error: { code: 'not_found', message: 'no' } }, { status: 404 }))),
      http.delete(`${BASE}/api/v2/assets/:id`, ({ params }) => (params.id === 'held' ? HttpResponse.json({ error: { code: 'asset_in_use', message: 'in use' } }, { status: 409 }) : new HttpResponse(null, { status: 204 }))),
    );
    expect((await getAsset(t, 'a1')).data.id).toBe('a1');
    await expect(getAsset(t, 'x/y')).rejects.toThrow(NotFoundError);
    expect(calls().at(-1)).toBe('GET /api/v2/assets/x%2Fy');
    await expect(deleteAsset(t, 'a1')).resolves.toBeUndefined();
    await expect(deleteAsset(t, 'held')).rejects.toThrow(ConflictError);
  });

  it('assetReference keeps the id, and the hash and file_path when known', () => {
    expect(assetReference({ id: 'a1', hash: 'blake3:ab', file_path: 'in.png' })).toEqual({ __type: 'core/ASSET', info: { id: 'a1', hash: 'blake3:ab', file_path: 'in.png' } });
    expect(assetReference({ id: 'a1', hash: null }, 'other.png')).toEqual({ __type: 'core/ASSET', info: { id: 'a1', file_path: 'other.png' } });
  });
});
