// Runs every bench/*.ts module that exports `run()` (except this file), one at
// a time so they do not skew each other's timings, prints each result's lines
// and a summary table. Benchmarks inform, they do not gate: exit code 0 even
// when one fails or throws (the table says FAIL / ERROR loudly).
// Usage: npm run bench   (builds first; runs under node --experimental-strip-types)
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';

interface BenchResult {
  name: string;
  lines: string[];
  ok: boolean;
}

const dir = fileURLToPath(new URL('.', import.meta.url));
const self = fileURLToPath(import.meta.url);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => join(dir, f))
  .filter((f) => f !== self)
  .sort();

const rows: { file: string; name: string; status: 'PASS' | 'FAIL' | 'ERROR'; ms: number }[] = [];
for (const file of files) {
  const short = file.slice(dir.length);
  const t0 = performance.now();
  let headed = false;
  try {
    const mod = (await import(pathToFileURL(file).href)) as { run?: () => Promise<BenchResult> };
    if (typeof mod.run !== 'function') continue; // helper modules
    console.log(`\n== ${short}`);
    headed = true;
    const r = await mod.run();
    for (const line of r.lines) console.log(`  ${line}`);
    rows.push({ file: short, name: r.name, status: r.ok ? 'PASS' : 'FAIL', ms: performance.now() - t0 });
  } catch (err) {
    console.log(`${headed ? '' : `\n== ${short}\n`}  ERROR: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    rows.push({ file: short, name: '(threw)', status: 'ERROR', ms: performance.now() - t0 });
  }
}

console.log('\n== summary');
const width = Math.max(4, ...rows.map((r) => r.name.length));
console.log(`  ${'result'.padEnd(6)}  ${'benchmark'.padEnd(width)}  ${'time'.padStart(8)}  file`);
for (const r of rows) {
  console.log(`  ${r.status.padEnd(6)}  ${r.name.padEnd(width)}  ${`${(r.ms / 1000).toFixed(1)} s`.padStart(8)}  ${r.file}`);
}
const bad = rows.filter((r) => r.status !== 'PASS').length;
console.log(bad ? `  ${bad} of ${rows.length} benchmark(s) over budget or broken (informational; exit code 0)` : `  all ${rows.length} benchmark(s) within budget`);
// exit() rather than exitCode: a benchmark that leaks a handle must not hang the run.
process.exit(0);
