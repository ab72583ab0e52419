// Issue 25 against the real local server: each workflow saved in the editor's format under
// test/fixtures/editor/real runs as it is (the client converts it with the server's object_info and sends it as
// extra_pnginfo.workflow, as the editor does) and saves byte-identical files to its hand-written API-format twin
// run with the same extra_pnginfo. SaveImage embeds the prompt and the workflow in each PNG, so equal bytes also
// mean equal JSON, key order included. Called by local-server.int.test.ts, so its jobs never run beside that suite's.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient, type JobResult, type WorkflowJSON } from '../../src/index.ts';
import { makePng } from '../../src/emulator/cloud-files.ts';

const DIR = fileURLToPath(new URL('../fixtures/editor/real/', import.meta.url));
const TWINS = readdirSync(DIR)
  .filter((f) => f.endsWith('.editor.json'))
  .map((f) => f.slice(0, -'.editor.json'.length));
/** The input image every LoadImage of these fixtures names. */
const PHOTO = 'twin-photo.png';

const read = (file: string): unknown => JSON.parse(readFileSync(`${DIR}${file}`, 'utf8'));

async function bytesOf(c: CloudClient, result: JobResult): Promise<Buffer[]> {
  return Promise.all(result.files.map(async (f) => Buffer.from(await (await c.download(f)).arrayBuffer())));
}

/** Registers the suite; skipped without a server. */
export function editorTwins(url: string | undefined): void {
  describe.skipIf(!url)('workflows saved in the editor, against their API-format twins', () => {
    let c: CloudClient;
    beforeAll(async () => {
      c = new CloudClient({ baseUrl: url! });
      await c.uploadImage(makePng(40, 30, 7), { filename: PHOTO, overwrite: true });
    });
    afterAll(() => c?.close());

    // The server caches each node's output by its inputs (neither `_meta` nor the hidden prompt/workflow count),
    // so a run right after an equal one is served from the cache with the same files and proves nothing. It keeps
    // only the last prompt's nodes: an unrelated prompt before each run makes both runs save afresh.
    const evict = () =>
      c.run({
        '1': { class_type: 'EmptyImage', inputs: { width: 1, height: 1, batch_size: 1, color: Math.floor(Math.random() * 0xffffff) } },
        '2': { class_type: 'PreviewImage', inputs: { images: ['1', 0] } },
      });

    for (const name of TWINS) {
      it(`${name}: validates clean, and runs to the same bytes as its twin`, async () => {
        const editor = read(`${name}.editor.json`) as { nodes: unknown[]; links: unknown[] };
        const twin = read(`${name}.api.json`) as WorkflowJSON;
        expect(await c.validateWorkflow(editor)).toEqual([]);

        await evict();
        const saved = await c.run(editor, { timeout: 60_000 });
        await evict();
        const handWritten = await c.run(twin, { timeout: 60_000, extraData: { extra_pnginfo: { workflow: editor } } });

        expect(saved.files.length).toBeGreaterThan(0);
        expect(saved.files.map((f) => f.filename.replace(/_\d+_\.png$/, ''))).toEqual(handWritten.files.map((f) => f.filename.replace(/_\d+_\.png$/, '')));
        // Both runs saved (the counters moved), so the bytes compared are each run's own.
        for (const [i, f] of saved.files.entries()) expect(f.filename).not.toBe(handWritten.files[i]!.filename);
        const [a, b] = await Promise.all([bytesOf(c, saved), bytesOf(c, handWritten)]);
        for (const [i, bytes] of a.entries()) expect(bytes.equals(b[i]!), `${saved.files[i]!.filename} vs ${handWritten.files[i]!.filename}`).toBe(true);
      });
    }
  });
}
