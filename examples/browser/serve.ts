// `npm run example:browser`: the example page against a local emulator.
//
// Starts the emulator in its `local` personality (a self-hosted server: no
// key, /view answers 200 with the file) with steps slow enough to watch the
// previews and press Cancel, and Vite's dev server for examples/browser/.
// Its last line is the page's URL, `?server=` pointing at the emulator.
// Ctrl-C stops both.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

// The page imports the built package (dist/), as a user's app does.
if (!existsSync(`${root}dist/index.browser.js`) || !existsSync(`${root}dist/emulator.js`)) {
  console.log('dist/ is missing: building the SDK first (npm run build)…');
  execSync('npm run build', { cwd: root, stdio: 'inherit' });
}
const { makePng, startEmulator } = await import('@platformui/sdk/emulator');

const emulator = await startEmulator({
  personality: 'local',
  // ~300 ms per step: a run of the invert example takes a few seconds.
  cloud: { stepMs: 300, progressSteps: 4 },
});
// The example workflows load `example.png`: the emulator has it, as if uploaded.
emulator.cloud.addFile('example.png', makePng(96, 96, 0));

const vite = await createServer({ configFile: `${here}vite.config.ts`, server: { host: '127.0.0.1', port: 5173 } });
await vite.listen();
const pageUrl = vite.resolvedUrls?.local[0] ?? `http://127.0.0.1:${vite.config.server.port}/`;

let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await Promise.allSettled([vite.close(), emulator.close()]);
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

console.log(`emulator (local personality, no key): ${emulator.url}`);
console.log('Open the page (Ctrl-C stops both servers):');
console.log(`${pageUrl}?server=${emulator.url}`);
