// `npm run demo`: starts one emulator and runs every example against it, in order.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMULATOR_API_KEY, EMULATOR_TOKEN, startEmulator } from '@platformui/sdk/emulator';

const EXAMPLES = ['registry-search.ts', 'publish-node.ts', 'relight.ts', 'relight-webhook.ts', 'upload-and-submit.ts', 'run-workflow.ts', 'edit-exported-workflow.ts', 'missing-packs.ts', 'typed-builder.ts', 'run-saved-workflow.ts', 'local-server.ts', 'lost-answer.ts'];

// The examples run against this emulator only, with its own credentials: no PLATFORMUI_* setting
// of the caller's shell (a real token or key, a real server's URL) reaches them, except the
// log level (`PLATFORMUI_LOG=debug npm run demo` shows what the SDK does).
const callerEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PLATFORMUI_') || name === 'PLATFORMUI_LOG'));
const emulator = await startEmulator();
const outDir = mkdtempSync(join(tmpdir(), 'platformui-demo-'));
console.log(`Emulator at ${emulator.url}\n`);
let failed = 0;
try {
  for (const file of EXAMPLES) {
    console.log(`── examples/${file}`);
    const started = performance.now();
    // Async spawn: the emulator in this process must keep serving while the example runs.
    const child = spawn(process.execPath, ['--experimental-strip-types', '--no-warnings', fileURLToPath(new URL(file, import.meta.url))], {
      stdio: 'inherit',
      env: {
        ...callerEnv,
        PLATFORMUI_BASE_URL: emulator.url,
        PLATFORMUI_CLOUD_URL: emulator.url,
        PLATFORMUI_TOKEN: EMULATOR_TOKEN,
        PLATFORMUI_API_KEY: EMULATOR_API_KEY,
        PLATFORMUI_PUBLISHER: 'acme', // the emulator's seeded publisher of the README's examples
        OUT_DIR: outDir,
      },
    });
    const [code, signal] = await once(child, 'exit');
    if (code !== 0) failed++;
    console.log(`   ${code === 0 ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
} finally {
  await emulator.close();
}
console.log(failed ? `${failed} example(s) failed` : `All ${EXAMPLES.length} examples ran; files written to ${outDir}`);
process.exit(failed ? 1 : 0);
