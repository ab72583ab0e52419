// `npm run demo`: starts one emulator and runs every example against it, in order.
import { spawnSync } from 'node:child_process';
import { startEmulator } from '@platformui/sdk/emulator';

const EXAMPLES = ['registry-search.ts', 'publish-node.ts'];

const emulator = await startEmulator();
console.log(`Emulator at ${emulator.url}\n`);
let failed = 0;
try {
  for (const file of EXAMPLES) {
    console.log(`── examples/${file}`);
    const r = spawnSync(process.execPath, ['--experimental-strip-types', '--no-warnings', new URL(file, import.meta.url).pathname], {
      stdio: 'inherit',
      env: { ...process.env, PLATFORMUI_BASE_URL: emulator.url, PLATFORMUI_CLOUD_URL: emulator.url },
    });
    if (r.status !== 0) failed++;
    console.log();
  }
} finally {
  await emulator.close();
}
console.log(failed ? `${failed} example(s) failed` : `All ${EXAMPLES.length} examples ran`);
process.exit(failed ? 1 : 0);
