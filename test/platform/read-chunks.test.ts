// platform.readChunks(): a file read in order into one reused buffer (Node), refused in a browser;
// bad paths and aborts are typed errors, and stopping early closes the file.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { APIUserAbortError, InvalidArgumentError } from '../../src/errors.ts';
import { platform as browser } from '../../src/platform/browser.ts';
import { platform } from '../../src/platform/node.ts';

const dir = mkdtempSync(join(tmpdir(), 'read-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytes = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7) % 256);
const file = join(dir, 'ten-k.bin');
writeFileSync(file, bytes);
// Linux lists this process's open descriptors here; elsewhere the close check is skipped.
const openFds = () => readdirSync('/proc/self/fd').length;
const linux = process.platform === 'linux';

describe('platform.readChunks() (Node)', () => {
  it('yields the file in order, chunkSize bytes at a time, as views of one buffer', async () => {
    const copies: Uint8Array[] = [];
    const buffers = new Set<ArrayBufferLike>();
    for await (const chunk of platform.readChunks(file, 4096)) {
      buffers.add(chunk.buffer);
      copies.push(chunk.slice()); // a view is valid only until the next read: kept as a copy
    }
    expect(copies.map((c) => c.byteLength)).toEqual([4096, 4096, 1808]);
    expect(Buffer.concat(copies).equals(bytes)).toBe(true);
    expect(buffers.size).toBe(1);
  });

  it('reads an empty file as no chunks', async () => {
    writeFileSync(join(dir, 'empty.bin'), '');
    const chunks: Uint8Array[] = [];
    for await (const chunk of platform.readChunks(join(dir, 'empty.bin'))) chunks.push(chunk);
    expect(chunks).toEqual([]);
  });

  it('refuses a missing path, a directory and a bad chunk size with InvalidArgumentError', async () => {
    const first = (path: string, size?: number) => platform.readChunks(path, size)[Symbol.asyncIterator]().next();
    await expect(first(join(dir, 'nope.bin'))).rejects.toThrow(/no such file or directory \(ENOENT\)/);
    await expect(first(dir)).rejects.toThrow(/it is a directory/);
    await expect(first(file, 0)).rejects.toThrow(InvalidArgumentError);
  });

  it.skipIf(!linux)('closes the file when the loop stops early', async () => {
    const before = openFds();
    for await (const _ of platform.readChunks(file, 1024)) break;
    expect(openFds()).toBe(before);
  });

  it.skipIf(!linux)('stops before the next read on abort with APIUserAbortError, and closes the file', async () => {
    const before = openFds();
    const ac = new AbortController();
    let seen = 0;
    const reading = (async () => {
      for await (const _ of platform.readChunks(file, 1024, ac.signal)) if (++seen === 2) ac.abort();
    })();
    await expect(reading).rejects.toThrow(APIUserAbortError);
    expect(seen).toBe(2);
    expect(openFds()).toBe(before);
  });
});

describe('platform.readChunks() (browser)', () => {
  it('refuses a path with InvalidArgumentError, as fileBlob does', async () => {
    const err = await browser.readChunks('/any/path')[Symbol.asyncIterator]().next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(String(err)).toMatch(/only available in Node/);
    await expect(browser.fileBlob('/any/path')).rejects.toThrow(InvalidArgumentError);
  });
});
