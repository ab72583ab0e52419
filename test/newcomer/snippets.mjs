// README's ```ts / ```js blocks, each run as a script in the ESM app against
// fresh emulators: placeholder hosts become the emulators' URLs, credentials
// come from the environment as `platformui emulator` prints them, and the
// free variables a fragment uses come from prelude.mjs.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exec, StepFailure } from './lib.mjs';
import { emulatorsFor, mapHosts, withEmulators } from './servers.mjs';

const numbered = (source) => source.split('\n').map((l, i) => `${String(i + 1).padStart(3)} | ${l}`).join('\n');

/** SDK log lines (`[platformui] …`) in a text. */
export const sdkLogLines = (text) => text.split('\n').filter((l) => /\[platformui\]/.test(l));

/**
 * Runs one script block. `app` is `{ dir, env, credentials }` (the ESM app,
 * its environment, the emulator's documented credentials); `relightJson` the
 * exported workflow the Editing block reads. Throws StepFailure with what went
 * wrong; the log holds the source as run, its output and the error.
 */
export async function runScriptBlock(block, { app, relightJson, log, timeout = 60_000 }) {
  const dir = join(app.dir, 'readme-blocks', `L${block.line}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(relightJson, join(dir, 'relight_api.json'));
  // A workflow as the editor saves it, beside the exported one (the "Workflows saved in the editor" block reads it).
  copyFileSync(join(dirname(relightJson), 'saved-in-editor.json'), join(dir, 'saved.json'));
  // What `platformui example` writes (the CLI bundles this file): the "Editing an exported workflow" block reads it.
  copyFileSync(join(dirname(relightJson), 'invert.json'), join(dir, 'invert.json'));
  const extra = emulatorsFor(block.source);
  await withEmulators({ appDir: app.dir, env: app.env, credentials: app.credentials, log, extra }, async ({ urls, env }) => {
    const source = mapHosts(block.source, urls);
    const file = join(dir, `block.${block.lang}`);
    writeFileSync(file, `${source}\n`);
    log(`\nREADME.md:${block.line} as run (${file}):\n${numbered(source)}`);
    const prelude = pathToFileURL(join(app.dir, 'newcomer-prelude.mjs')).href;
    // The local-personality ones: v2's take their files as assets (a block passes `inputs`).
    const localUrls = extra.filter((e) => e.startsWith('local')).map((e) => urls[e]).join(',');
    const r = await exec('node', ['--disable-warning=ExperimentalWarning', '--import', prelude, file], {
      cwd: dir, env: { ...app.env, ...env, NEWCOMER_LOCAL_URLS: localUrls }, log, timeout,
    });
    if (r.timedOut) throw new StepFailure(`did not end within ${timeout / 1000}s (a request that never settles, or a handle left open)`);
    if (r.code !== 0) {
      const lines = r.stderr.trim().split('\n');
      const error = lines.find((l) => /^\s*(Uncaught )?[A-Z]\w*(Error|Exception)\b/.test(l)) ?? lines.at(-1) ?? '';
      throw new StepFailure(`exited with ${r.code}: ${error.trim()}`);
    }
    // "A good day prints nothing at the default level": only a block that sets a log level may print SDK lines.
    const logged = sdkLogLines(r.stderr + r.stdout);
    if (logged.length && !/logLevel|logger/.test(block.source)) {
      throw new StepFailure(`printed ${logged.length} SDK log line(s) at the default log level: ${logged[0].trim()}`);
    }
  });
}
