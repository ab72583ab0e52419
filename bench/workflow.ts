// Workflows checked before they cost money (issue 10):
// (a) validateWorkflow on a 200-node workflow against a real 440-class object_info, per call
//     after the first (which reads the classes it meets). Target: ≤ 2 ms.
// (b) generateTypes on the same object_info (the codegen behind `platformui-codegen`), and the
//     size of what it writes. Target: well under a second.
// Needs a build (dist/) and the shared fixture; prints one line and passes when the fixture is
// absent (a user's clone has no ../shared). Erasable TS only (node --experimental-strip-types).
import { existsSync, readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const FIXTURE = `${process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server'}/object_info.json`;
const VALIDATE_TARGET_MS = 2;
const CODEGEN_TARGET_MS = 1000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** A 200-node chain over classes of the real object_info (loads, inverts, blurs, saves), every value valid. */
function chain(n: number): Record<string, unknown> {
  const wf: Record<string, unknown> = { '1': { class_type: 'LoadImage', inputs: { image: 'example.png' } } };
  for (let i = 2; i < n; i++) {
    wf[String(i)] =
      i % 3 === 0
        ? { class_type: 'ImageBlur', inputs: { image: [String(i - 1), 0], blur_radius: 3, sigma: 1.5 } }
        : i % 3 === 1
          ? { class_type: 'ImageScaleBy', inputs: { image: [String(i - 1), 0], upscale_method: 'bilinear', scale_by: 1 } }
          : { class_type: 'ImageInvert', inputs: { image: [String(i - 1), 0] }, _meta: { title: `Invert ${i}` } };
  }
  wf[String(n)] = { class_type: 'SaveImage', inputs: { images: [String(n - 1), 0], filename_prefix: 'bench' } };
  return wf;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'workflows: validate 200 nodes against 440 classes; codegen';
  if (!existsSync(FIXTURE)) return { name, ok: true, lines: [`${FIXTURE} not found: skipped (the fixture is in ../shared)`] };
  const sdk = (await import(new URL('dist/index.js', root).href)) as typeof import('../src/index.ts');
  const text = readFileSync(FIXTURE, 'utf8');
  const wf = chain(200);

  // (a) a fresh object_info each round, so "first" really is the first call on it.
  const first: number[] = [];
  const after: number[] = [];
  for (let round = 0; round < 15; round++) {
    const info = JSON.parse(text) as Record<string, never>;
    let t = performance.now();
    const issues = sdk.validateWorkflow(wf, info);
    first.push(performance.now() - t);
    if (issues.length) throw new Error(`the bench workflow is not valid: ${issues[0]!.message}`);
    t = performance.now();
    for (let i = 0; i < 50; i++) sdk.validateWorkflow(wf, info);
    after.push((performance.now() - t) / 50);
  }
  const perCall = median(after);
  const lines = [
    `(a) validateWorkflow, 200 nodes, 440-class object_info (${(text.length / 1024).toFixed(0)} KB): first call ${median(first).toFixed(2)} ms, then ${perCall.toFixed(3)} ms per call (target ≤ ${VALIDATE_TARGET_MS} ms): ${perCall <= VALIDATE_TARGET_MS ? 'PASS' : 'FAIL'}`,
  ];
  let ok = perCall <= VALIDATE_TARGET_MS;

  // (b) the codegen, where the build has it.
  const entry = new URL('dist/codegen.js', root);
  if (existsSync(entry)) {
    const { generateTypes } = (await import(entry.href)) as { generateTypes: (info: unknown) => string };
    const times: number[] = [];
    let out = '';
    for (let i = 0; i < 7; i++) {
      const info = JSON.parse(text) as unknown;
      const t = performance.now();
      out = generateTypes(info);
      times.push(performance.now() - t);
    }
    const ms = median(times);
    ok &&= ms <= CODEGEN_TARGET_MS;
    lines.push(`(b) generateTypes on the same object_info: ${ms.toFixed(0)} ms (target ≤ ${CODEGEN_TARGET_MS} ms), ${(out.length / 1024).toFixed(0)} KB of types: ${ms <= CODEGEN_TARGET_MS ? 'PASS' : 'FAIL'}`);
  } else {
    lines.push('(b) dist/codegen.js not built: codegen not measured');
  }
  return { name, ok, lines };
}
