// `npm run demo`: starts one emulator and runs every example against it, in order.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMULATOR_API_KEY, EMULATOR_TOKEN, startEmulator } from '@platformui/sdk/emulator';

const EXAMPLES = ['registry-search.ts', 'publish-node.ts', 'relight.ts', 'relight-webhook.ts', 'upload-and-submit.ts', 'run-workflow.ts', 'local-server.ts'];

const emulator = await startEmulator();
const outDir = mkdtempSync(join(tmpdir(), 'platformui-demo-'));
console.log(`Emulator at ${emulator.url}\n`);
let failed = 0;
try {
  for (const file of EXAMPLES) {
    console.log(`── examples/${file}`);
    // Async spawn: the emulator in this process must keep serving while the example runs.
    const child = spawn(process.execPath, ['--experimental-strip-types', '--no-warnings', new URL(file, import.meta.url).pathname], {
      stdio: 'inherit',
      // The emulator's own credentials: a real key or token in the environment must not be sent to it.
      env: {
        ...process.env,
        PLATFORMUI_BASE_URL: emulator.url,
        PLATFORMUI_CLOUD_URL: emulator.url,
        PLATFORMUI_TOKEN: EMULATOR_TOKEN,
        PLATFORMUI_API_KEY: EMULATOR_API_KEY,
        OUT_DIR: outDir,
      },
    });
    const [code] = await once(child, 'exit');
    if (code !== 0) failed++;
    console.log();
  }
} finally {
  await emulator.close();
}
console.log(failed ? `${failed} example(s) failed` : `All ${EXAMPLES.length} examples ran; files written to ${outDir}`);
process.exit(failed ? 1 : 0);
