// Run a workflow with live progress over the WebSocket: a terminal progress bar,
// previews from binary frames, outputs saved to disk. Ctrl-C cancels this job only.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudClient, ExecutionError } from '@platformui/sdk';
import { EMULATOR_API_KEY, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_CLOUD_URL ? undefined : await startEmulator();
const cloud = new CloudClient({
  baseUrl: process.env.PLATFORMUI_CLOUD_URL ?? emulator!.url,
  // Our own emulator gets its own key, never the shell's; a local server (PLATFORMUI_CLOUD_URL=http://127.0.0.1:8188) needs none.
  apiKey: emulator ? EMULATOR_API_KEY : process.env.PLATFORMUI_API_KEY,
});
const outDir = join(process.env.OUT_DIR ?? '.', 'run-workflow-output');
mkdirSync(outDir, { recursive: true });

const abort = new AbortController();
process.once('SIGINT', () => abort.abort());

function bar(value: number, max: number): string {
  const width = 24;
  const filled = Math.round((value / Math.max(1, max)) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${value}/${max}`;
}

// On a terminal, one bar redrawn in place (`\r`); in a pipe or a log file, where `\r` would put every
// update on one line, one line per update.
function progress(line: string): void {
  process.stdout.write(process.stdout.isTTY ? `\r${line}` : `${line}\n`);
}

try {
  const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
  const { name } = await cloud.uploadImage(png, { filename: 'input.png' });

  let previews = 0;
  const result = await cloud.run(
    {
      '1': { class_type: 'LoadImage', inputs: { image: name } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'run' } },
    },
    {
      signal: abort.signal,
      timeout: 60_000,
      onProgress: ({ value, max, node }) => progress(`  node ${node ?? '?'} ${bar(value, max)}`),
      onPreview: (frame) => writeFileSync(join(outDir, `preview-${++previews}.${frame.mime === 'image/jpeg' ? 'jpg' : 'png'}`), frame.image),
    },
  );
  if (process.stdout.isTTY) process.stdout.write('\n');
  console.log(`Job ${result.promptId} completed: ${result.files.length} file(s), ${previews} preview(s)`);
  for (const file of result.files) {
    const bytes = await cloud.downloadToFile(file, join(outDir, file.filename));
    console.log(`  saved ${file.filename} (${bytes} bytes)`);
  }

  // A failing node surfaces as an ExecutionError with the server's exception type.
  try {
    await cloud.run({
      '1': { class_type: 'LoadImage', inputs: { image: name, fail_with: 'OOMError' } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'x' } },
    });
  } catch (err) {
    if (err instanceof ExecutionError) console.log(`Failed as expected: ${err.exceptionType}: ${err.exceptionMessage}`);
    else throw err;
  }
} finally {
  cloud.close();
  await emulator?.close();
}
