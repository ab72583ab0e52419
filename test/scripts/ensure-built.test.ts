// scripts/ensure-built.mjs, which `npm run demo` and `npm run bench` run first: it builds dist/
// only when dist/ is missing or older than what it is built from, saying why in one line. Run
// as a child process in a copy of the layout it reads, with a build.mjs that only records.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ensure-built-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run() {
  const r = spawnSync(process.execPath, [join(dir, 'scripts', 'ensure-built.mjs')], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('scripts/ensure-built.mjs', () => {
  it('builds when dist/ is missing or older than a source, and otherwise does nothing and says nothing', () => {
    mkdirSync(join(dir, 'scripts'));
    mkdirSync(join(dir, 'src'));
    copyFileSync(join(ROOT, 'scripts', 'ensure-built.mjs'), join(dir, 'scripts', 'ensure-built.mjs'));
    // Stands for the real build: it empties and writes dist/ and counts its runs.
    writeFileSync(
      join(dir, 'scripts', 'build.mjs'),
      "import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';\nrmSync('dist', { recursive: true, force: true });\nmkdirSync('dist');\nwriteFileSync('dist/index.js', '');\nappendFileSync('builds.log', 'built\\n');\nconsole.log('(build output)');\n",
    );
    writeFileSync(join(dir, 'src', 'index.ts'), 'export {};\n');
    writeFileSync(join(dir, 'package.json'), '{}\n');
    const past = new Date(Date.now() - 60_000);
    for (const f of ['scripts/build.mjs', 'scripts/ensure-built.mjs', 'src/index.ts', 'package.json']) utimesSync(join(dir, f), past, past);

    expect(run()).toEqual({ status: 0, stdout: 'dist/ is missing: building it (npm run build)\n(build output)\n', stderr: '' });
    // As after `npm ci`, whose prepare script has just built it.
    expect(run()).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(run()).toEqual({ status: 0, stdout: '', stderr: '' });

    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, 'src', 'index.ts'), later, later);
    expect(run()).toEqual({ status: 0, stdout: `${join('src', 'index.ts')} changed since dist/ was built: building it (npm run build)\n(build output)\n`, stderr: '' });
    expect(readFileSync(join(dir, 'builds.log'), 'utf8')).toBe('built\nbuilt\n');
  });

  it('is what the demo and the benchmarks run instead of an unconditional build', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const name of ['demo', 'bench']) {
      expect(scripts[name], name).toMatch(/^node scripts\/with-node\.cjs node scripts\/ensure-built\.mjs && /);
      expect(scripts[name], name).not.toContain('npm run build');
    }
  });
});
