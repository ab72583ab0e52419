// The codegen command in process (runCodegen: `platformui codegen`, which the
// platformui-codegen bin also runs): object_info from a file or a server (msw here;
// the emulator in test/cli/main.int.test.ts and test/workflow/workflow.int.test.ts), the file written
// once and left alone when unchanged, one summary line, the command line's exit codes.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildObjectInfo } from '../../../src/emulator/cloud-nodes.ts';
import type { ObjectInfo } from '../../../src/schemas/cloud.ts';
import { generateTypes } from '../../../src/workflow/codegen.ts';
import { runCodegen } from '../../helpers/run-codegen.ts';
import { interceptHttp } from '../../helpers/msw.ts';

const { server, seen } = interceptHttp();
const dir = mkdtempSync(join(tmpdir(), 'platformui-codegen-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const info = buildObjectInfo(['photo.png']) as unknown as ObjectInfo;
const infoFile = join(dir, 'object_info.json');
writeFileSync(infoFile, JSON.stringify(info));

/** Runs the command; returns its exit code and what it printed. */
async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCodegen(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

const saved = { url: process.env.PLATFORMUI_CLOUD_URL, key: process.env.PLATFORMUI_API_KEY };
afterEach(() => {
  for (const [name, value] of [['PLATFORMUI_CLOUD_URL', saved.url], ['PLATFORMUI_API_KEY', saved.key]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('platformui codegen (and platformui-codegen)', () => {
  it('--help prints the usage: --url is --server, the key only from a file or the environment', async () => {
    const help = await run('--help');
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^Usage: platformui codegen /);
    for (const option of ['--url URL', '--server URL', '--file PATH', '--out PATH', '--api-key-file FILE', '--timeout DURATION']) expect(help.stdout).toContain(option);
    expect(help.stdout).not.toMatch(/--api-key /);
  });

  it('writes the types of a file, once: an unchanged file is left alone', async () => {
    const out = join(dir, 'nodes.generated.ts');
    const first = await run('--file', infoFile, '--out', out);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^Wrote ${out}: 11 node classes \\(\\d+ KB\\) from ${infoFile} in \\d+ ms\\n$`));
    expect(readFileSync(out, 'utf8')).toBe(generateTypes(info));
    const mtime = statSync(out).mtimeMs;
    const again = await run('--file', infoFile, '--out', out);
    expect(again.stdout).toMatch(new RegExp(`^${out} is up to date: 11 node classes`));
    expect(statSync(out).mtimeMs).toBe(mtime);
  });

  it('without --out, prints the types, and the summary on stderr', async () => {
    const { code, stdout, stderr } = await run('--file', infoFile, '--name', 'EmulatorNodes', '--import-from', '../src/index.ts', '--max-combo-values', '2');
    expect(code).toBe(0);
    expect(stdout).toBe(generateTypes(info, { typeName: 'EmulatorNodes', importFrom: '../src/index.ts', maxComboValues: 2 }));
    expect(stderr).toMatch(/^Generated 11 node classes .* from .*object_info\.json in \d+ ms\n$/);
  });

  it('reads a server with the client: keyless on loopback, the API key for the cloud', async () => {
    server.use(
      http.get('http://127.0.0.1:8188/api/object_info', () => HttpResponse.json(info)),
      http.get('https://cloud.test/api/object_info', ({ request }) => (request.headers.get('x-api-key') === 'k_SECRET' ? HttpResponse.json(info) : HttpResponse.json({ error: 'no' }, { status: 401 }))),
    );
    const local = await run('--url', 'http://127.0.0.1:8188');
    expect([local.code, local.stdout]).toEqual([0, generateTypes(info)]);
    expect(local.stderr).toContain('from http://127.0.0.1:8188/ in');
    expect(seen[0]!.headers.get('x-api-key')).toBeNull();
    // --server is the same option.
    expect((await run('--server', 'http://127.0.0.1:8188')).stdout).toBe(generateTypes(info));

    // The key from a file (trimmed: a trailing newline is not part of it).
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, 'k_SECRET\n');
    const cloud = await run('--url', 'https://cloud.test', '--api-key-file', keyFile);
    expect(cloud.code).toBe(0);
    // The key from the environment, as every client takes it; and the URL too.
    process.env.PLATFORMUI_CLOUD_URL = 'https://cloud.test';
    process.env.PLATFORMUI_API_KEY = 'k_SECRET';
    const fromEnv = await run();
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stderr).toContain('from https://cloud.test/ in');
    delete process.env.PLATFORMUI_API_KEY;
    writeFileSync(keyFile, 'wrong');
    const refused = await run('--url', 'https://cloud.test', '--api-key-file', keyFile);
    expect(refused).toEqual({ code: 3, stdout: '', stderr: 'platformui codegen: the server refused the API key (401): check PLATFORMUI_API_KEY or --api-key-file\n' });
  });

  it('takes no key on the command line (`ps` shows it): --api-key is refused without repeating the key', async () => {
    for (const argv of [['--url', 'https://cloud.test', '--api-key', 'k_SECRET'], ['--url', 'https://cloud.test', '--api-key=k_SECRET']]) {
      const { code, stdout, stderr } = await run(...argv);
      expect([code, stdout]).toEqual([2, '']);
      expect(stderr.split('\n')[0]).toBe('platformui: --api-key: a secret on the command line shows in `ps` and in shell history: set PLATFORMUI_API_KEY or pass --api-key-file FILE');
      expect(stderr).not.toContain('k_SECRET');
    }
    expect(seen).toHaveLength(0);
    const missing = await run('--url', 'https://cloud.test', '--api-key-file', join(dir, 'no-such-key'));
    expect([missing.code, missing.stderr]).toEqual([2, `platformui codegen: --api-key-file: cannot read ${join(dir, 'no-such-key')} (ENOENT)\n(see platformui codegen --help)\n`]);
    writeFileSync(join(dir, 'empty-key'), ' \n');
    expect((await run('--url', 'https://cloud.test', '--api-key-file', join(dir, 'empty-key'))).stderr).toBe(`platformui codegen: --api-key-file: ${join(dir, 'empty-key')} is empty\n(see platformui codegen --help)\n`);
    expect(seen).toHaveLength(0);
  });

  it('refuses a JSON file that is not object_info, saying what it found', async () => {
    const pkg = join(dir, 'package.json');
    writeFileSync(pkg, JSON.stringify({ name: '@platformui/sdk', version: '1.0.0', type: 'module', scripts: { build: 'x' }, dependencies: {}, files: ['dist'] }));
    const out = join(dir, 'never-written.ts');
    const refused = await run('--file', pkg, '--out', out);
    expect([refused.code, refused.stdout]).toEqual([1, '']);
    expect(refused.stderr).toBe(
      `platformui codegen: ${pkg} is not a server's object_info (node class → definition): none of its 6 entries is a node definition (an object with "input" or "output"); it has "name" ("@platformui/sdk"), "version" ("1.0.0"), "type" ("module"), "scripts" (an object), … (2 more)\n`,
    );
    expect(() => statSync(out)).toThrow();
    const empty = join(dir, 'empty.json');
    writeFileSync(empty, '{}');
    expect((await run('--file', empty)).stderr).toBe(`platformui codegen: ${empty} is not a server's object_info (node class → definition): it is an empty object\n`);
    // A workflow is not object_info either: its nodes have class_type and inputs.
    const workflow = join(dir, 'workflow.json');
    writeFileSync(workflow, JSON.stringify({ '1': { class_type: 'LoadImage', inputs: { image: 'a.png' } }, '2': { class_type: 'SaveImage', inputs: {} } }));
    expect((await run('--file', workflow)).stderr).toMatch(/is not a server's object_info .*: none of its 2 entries is a node definition .*; it has "1" \(an object\), "2" \(an object\)\n$/);
    // A few odd entries among node definitions are skipped, and not counted.
    const odd = join(dir, 'odd.json');
    writeFileSync(odd, JSON.stringify({ ...info, _version: '1.2' }));
    const ok = await run('--file', odd);
    expect([ok.code, ok.stdout]).toEqual([0, generateTypes(info)]);
    expect(ok.stderr).toMatch(/^Generated 11 node classes /);
  });

  it('says what is wrong with the command line (exit 2) or the input (exit 1)', async () => {
    delete process.env.PLATFORMUI_CLOUD_URL;
    const usage = (r: { code: number; stderr: string }) => [r.code, r.stderr.split('\n')[0]];
    expect(usage(await run())).toEqual([2, 'platformui codegen: give --server URL (or --url) or --file object_info.json, or set PLATFORMUI_CLOUD_URL']);
    expect(usage(await run('--url', 'http://x', '--file', 'y'))).toEqual([2, 'platformui codegen: give --server (or --url) or --file, not both']);
    expect(usage(await run('--file', 'y', '--api-key-file', 'k'))).toEqual([2, 'platformui codegen: --api-key-file goes with --server: a file needs no key']);
    expect(usage(await run('--file', 'y', '--max-combo-values', 'many'))).toEqual([2, 'platformui codegen: --max-combo-values must be a whole number, got "many"']);
    expect(usage(await run('--fiel', 'y'))).toEqual([2, "platformui codegen: Unknown option '--fiel' (did you mean --file?)"]);
    expect(usage(await run('--file', join(dir, 'missing.json')))).toEqual([2, `platformui codegen: --file: cannot read ${join(dir, 'missing.json')} (ENOENT)`]);
    writeFileSync(join(dir, 'bad.json'), '{ not json');
    expect((await run('--file', join(dir, 'bad.json'))).stderr).toMatch(/^platformui codegen: --file: .*bad\.json is not JSON: /);
    writeFileSync(join(dir, 'list.json'), '[]');
    expect(usage(await run('--file', join(dir, 'list.json')))).toEqual([2, "platformui codegen: objectInfo: must be the server's object_info (an object of node classes), got an empty array"]);
  });

  it('--out in a folder that does not exist yet: the folder is made', async () => {
    const out = join(dir, 'src', 'deeper', 'nodes.generated.ts');
    const r = await run('--file', infoFile, '--out', out);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readFileSync(out, 'utf8')).toBe(generateTypes(info));
  });
});
