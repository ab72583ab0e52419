// v2 assets against a REAL v2 server (comfy-api-proxy in front of ComfyUI), named by PLATFORMUI_V2_URL
// (`url=$(../shared/real-server/v2/start.sh)`); without the variable this file skips. The requests go
// through a TCP relay of the test's own that counts the bytes the client sends, so "0 bytes of the file
// sent" is seen on the wire, not only in the SDK's own count.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport } from '../../src/transport/transport.ts';
import { assetReference, deleteAsset, getAsset, hasAssetHash, uploadAsset } from '../../src/cloud/v2/assets.ts';
import { blake3 } from '../../src/cloud/v2/hash.ts';
import { ConflictError, NotFoundError } from '../../src/errors.ts';

const url = process.env.PLATFORMUI_V2_URL;

/** A relay to the server that counts what clients send (request line, headers, body). */
async function countingRelay(upstream: URL) {
  let sent = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const up = createConnection({ host: upstream.hostname, port: Number(upstream.port) });
    open.add(client).add(up);
    client.on('data', (c: Buffer) => (sent += c.byteLength));
    client.pipe(up).pipe(client);
    const end = () => [client, up].forEach((s) => (s.destroy(), open.delete(s)));
    client.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    take: () => [sent, (sent = 0)][0]!,
    close: () => new Promise<void>((r) => (open.forEach((s) => s.destroy()), server.close(() => r()))),
  };
}

if (!url) it('v2 assets on a real v2 server: skipped', ({ skip }) => skip('set PLATFORMUI_V2_URL to a running v2 server (e.g. the URL ../shared/real-server/v2/start.sh prints)'));
describe.skipIf(!url)('v2 assets on a real v2 server', () => {
  let relay: Awaited<ReturnType<typeof countingRelay>>;
  let t: Transport;
  let dir: string;
  beforeAll(async () => {
    relay = await countingRelay(new URL(url!));
    t = new Transport({ service: 'cloud', options: { baseUrl: relay.url }, baseUrlEnv: 'PLATFORMUI_CLOUD_URL', credential: undefined, authScheme: 'bearer', credentialName: 'apiKey', credentialOptional: true });
    dir = mkdtempSync(join(tmpdir(), 'v2-assets-real-'));
  });
  afterAll(async () => {
    await relay?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends a new 10 MB file once (201, created_new), then 0 bytes of it (from-hash); the hashes agree', { timeout: 120_000 }, async () => {
    const file = join(dir, `in-${Date.now()}.bin`);
    const bytes = randomBytes(10 * 1024 * 1024);
    writeFileSync(file, bytes);
    const mine = await blake3(file);

    relay.take();
    const first = await uploadAsset(t, file, { contentType: 'application/octet-stream' });
    const wire1 = relay.take();
    expect(first.response.status).toBe(201);
    expect(first.via).toBe('upload');
    expect(first.data.created_new).toBe(true);
    expect(first.bytesSent).toBe(bytes.byteLength);
    expect(wire1).toBeGreaterThan(bytes.byteLength);
    // The server's own hash of the bytes it received is the client's.
    expect(first.data.hash).toBe(mine.hash);
    expect(first.data.size_bytes).toBe(bytes.byteLength);

    const second = await uploadAsset(t, file, { filename: 'again.bin' });
    const wire2 = relay.take();
    expect(second.via).toBe('from-hash');
    expect(second.bytesSent).toBe(0);
    expect(second.data.id).toBe(first.data.id);
    expect(second.data.hash).toBe(mine.hash);
    // HEAD + a small JSON POST: a few hundred bytes of headers, none of the file.
    expect(wire2).toBeLessThan(4096);

    const got = await getAsset(t, first.data.id);
    expect(got.data.hash).toBe(mine.hash);
    expect(assetReference(got.data)).toEqual({ __type: 'core/ASSET', info: { id: first.data.id, hash: mine.hash, file_path: first.data.file_path } });
    await deleteAsset(t, first.data.id);
    await expect(getAsset(t, first.data.id)).rejects.toThrow(NotFoundError);
    await expect(deleteAsset(t, first.data.id)).rejects.toThrow(NotFoundError);
  });

  it('a stream is uploaded unhashed and counted; HEAD by-hash then finds it', async () => {
    const bytes = randomBytes(200_000);
    const stream = new Blob([bytes]).stream();
    const up = await uploadAsset(t, stream, { filename: 'streamed.bin' });
    expect(up.via).toBe('upload');
    expect(up.bytesSent).toBe(bytes.byteLength);
    const { hash } = await blake3(bytes);
    expect(up.data.hash).toBe(hash);
    expect(await hasAssetHash(t, hash)).toBe(true);
    await deleteAsset(t, up.data.id);
  });

  it('a miss is a HEAD 404 read as false', async () => {
    expect(await hasAssetHash(t, `blake3:${'1'.repeat(64)}`)).toBe(false);
  });

  it('409 hash_mismatch is a ConflictError with its code', async () => {
    // Bytes changed between the hash and the send, as uploadAsset would send them: the hash of `a`, the bytes of `b`.
    const a = randomBytes(1000);
    const b = randomBytes(1000);
    const { hash } = await blake3(a);
    const form = new FormData();
    form.append('file_path', 'x.bin');
    form.append('expected_hash', hash);
    form.append('file', new Blob([b]), 'x.bin');
    const err = await t.request({ method: 'POST', path: 'api/v2/assets', body: form, auth: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).error).toMatchObject({ code: 'hash_mismatch' });
  });
});
