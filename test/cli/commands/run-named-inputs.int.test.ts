// `platformui run` on a file saved in the editor, and --set by input name, as a user runs them:
// the command line (main(), in the test's process) against emulators over real loopback sockets. The file is converted with the server's object_info (one request), --set
// takes the names workflow.inputs() gives (title.input, input alone, id.input), --list-inputs
// shows them, and every mistake is exit 2 before anything is uploaded or submitted.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { makePng } from '../../../src/emulator/cloud-files.ts';
import { baseEnv, runCli, type CliResult as Result } from '../../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SAVED = join(ROOT, 'test', 'fixtures', 'named-inputs', 'blur-twice.json');
const INVERT = join(ROOT, 'examples', 'workflows', 'invert.json');

let dir: string;
let photo: string;
let counter = 0;
/** A fresh name: the emulator serves a workflow it has run before from its cache. */
const unique = (what: string) => `${what}_${++counter}`;

/** The saved file with an app-mode interface (`extra.linearData.inputs`): the second blur's radius and the prefix. */
let withInterface: string;
/** The saved file with a node of a class no server has. */
let unknownClass: string;

beforeAll(async () => {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.tmp', 'cli-named-'));
  photo = join(dir, 'photo.png');
  writeFileSync(photo, makePng(8, 8, 0x808080));
  const saved = JSON.parse(readFileSync(SAVED, 'utf8'));
  withInterface = join(dir, 'app.json');
  writeFileSync(withInterface, JSON.stringify({ ...saved, extra: { linearData: { inputs: [[3, 'blur_radius'], [4, 'filename_prefix']] } } }));
  unknownClass = join(dir, 'unknown.json');
  saved.nodes[1].type = 'ImageBlurr';
  writeFileSync(unknownClass, JSON.stringify(saved));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));


/** Runs the command line to its end (in this process: test/helpers/cli.ts), with no PLATFORMUI_* variables of the test's own. */
function cli(args: string[]): Promise<Result> {
  return runCli(args, { cwd: dir, env: baseEnv() });
}

const outDir = () => mkdtempSync(join(dir, 'out-'));
const objectInfoReads = (e: Emulator) => e.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/object_info')).length;
const writes = (e: Emulator) => e.requests.filter((r) => r.method === 'POST');
/** The workflow the emulator ran for the job `run` printed. */
function ran(e: Emulator, stdout: string) {
  const id = /^Submitted job (\S+)$/m.exec(stdout)?.[1];
  return e.cloud.engine.jobs.get(id!)!.prompt;
}

describe('platformui run on a file saved in the editor (a local server)', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'local', cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());

  it('converts it with one object_info request, sets inputs by name, uploads, runs, downloads', async () => {
    emu.requests.length = 0;
    const out = outDir();
    const prefix = unique('named');
    const r = await cli(['run', SAVED, '--input', `image=${photo}`, '--set', 'Hard.blur v2.blur_radius=3', '--set', `filename_prefix=${prefix}`, '--set', '2.sigma=0.5', '--validate', '--out', out, '--server', emu.url]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readdirSync(out)).toEqual([`${prefix}_00001_.png`]);
    expect(r.stdout).toMatch(/^Uploaded .*photo\.png as \S+ for #1 LoadImage "Load Photo"\.image$/m);
    const prompt = ran(emu, r.stdout);
    expect(prompt['3']!.inputs).toMatchObject({ blur_radius: 3, sigma: 3, image: ['2', 0] });
    expect(prompt['2']!.inputs).toMatchObject({ blur_radius: 2, sigma: 0.5 });
    expect(prompt['4']!.inputs.filename_prefix).toBe(prefix);
    // --validate checks against the object_info the conversion read: one request for both.
    expect(objectInfoReads(emu)).toBe(1);
  });

  it('run as saved: the SDK converts it and sends the saved graph along (extra_pnginfo), as the editor does; changed, it does not', async () => {
    emu.cloud.addFile('photo.png', makePng(8, 8, 1));
    emu.requests.length = 0;
    const saved = JSON.parse(readFileSync(SAVED, 'utf8'));
    const r = await cli(['run', SAVED, '--out', outDir(), '--server', emu.url]);
    expect(r.code, r.stderr).toBe(0);
    const job = emu.cloud.engine.jobs.get(/^Submitted job (\S+)$/m.exec(r.stdout)![1]!)!;
    expect(job.extraData.extra_pnginfo).toEqual({ workflow: saved });
    expect(job.prompt['3']!.inputs).toMatchObject({ blur_radius: 9, sigma: 3 });
    expect(objectInfoReads(emu)).toBe(1);
    const changed = await cli(['run', SAVED, '--set', `filename_prefix=${unique('changed')}`, '--out', outDir(), '--server', emu.url]);
    expect(changed.code, changed.stderr).toBe(0);
    expect(emu.cloud.engine.jobs.get(/^Submitted job (\S+)$/m.exec(changed.stdout)![1]!)!.extraData.extra_pnginfo).toBeUndefined();
  });

  it('--list-inputs: the names --set takes, with types, values and ranges; nothing run', async () => {
    emu.requests.length = 0;
    const r = await cli(['run', SAVED, '--list-inputs', '--set', 'Soft blur.blur_radius=4', '--server', emu.url]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'NAME                        NODE          TYPE    VALUE        ALLOWED',
        'Load Photo.image            #1 LoadImage  COMBO   "photo.png"  a file: --input NAME=FILE uploads one',
        'Soft blur.blur_radius       #2 ImageBlur  INT     4            from 1 to 31, step 1, default 1',
        'Soft blur.sigma             #2 ImageBlur  FLOAT   1            from 0.1 to 10, step 0.1, default 1',
        'Hard.blur v2.blur_radius    #3 ImageBlur  INT     9            from 1 to 31, step 1, default 1',
        'Hard.blur v2.sigma          #3 ImageBlur  FLOAT   3            from 0.1 to 10, step 0.1, default 1',
        'Save Image.filename_prefix  #4 SaveImage  STRING  "blurred"    default "PlatformUI"',
        '6 inputs: set one with --set NAME=VALUE (or ID.INPUT, like 1.image=…)',
        '',
      ].join('\n'),
    );
    const json = await cli(['run', withInterface, '--list-inputs', '--json', '--server', emu.url]);
    expect(json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { names: string[] }).map((i) => i.names)).toEqual([
      ['Hard.blur v2.blur_radius', 'blur_radius', '3.blur_radius'],
      ['Save Image.filename_prefix', 'filename_prefix', '4.filename_prefix'],
    ]);
    expect(writes(emu)).toEqual([]);
  });

  it('an app-mode interface: its inputs by their names; the others refused, naming it', async () => {
    const out = outDir();
    const prefix = unique('app');
    const r = await cli(['run', withInterface, '--input', `image=${photo}`, '--set', 'blur_radius=5', '--set', `filename_prefix=${prefix}`, '--out', out, '--server', emu.url]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(ran(emu, r.stdout)['3']!.inputs.blur_radius).toBe(5);
    const outside = await cli(['run', withInterface, '--set', 'Soft blur.sigma=2', '--server', emu.url]);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toBe(
      'platformui run: --set Soft blur.sigma: not in this workflow\'s interface: its editor file exposes only "Hard.blur v2.blur_radius", "Save Image.filename_prefix"\n(see platformui run --help)\n',
    );
  });

  it('exit 2 for a name that is ambiguous, unknown or refused by object_info; exit 5 for a file that cannot be converted; nothing sent', async () => {
    emu.requests.length = 0;
    const cases: Array<[string[], string]> = [
      [['--set', 'blur_radius=3'], '--set blur_radius: names 2 inputs: use "Soft blur.blur_radius" (#2 ImageBlur "Soft blur") or "Hard.blur v2.blur_radius" (#3 ImageBlur "Hard.blur v2")'],
      [['--set', 'Hard.blur v2.blur_raduis=3'], '--set Hard.blur v2.blur_raduis: no such input (did you mean "Hard.blur v2.blur_radius"?); the workflow\'s inputs: "Load Photo.image", "Soft blur.blur_radius", "Soft blur.sigma", "Hard.blur v2.blur_radius", "Hard.blur v2.sigma", "Save Image.filename_prefix"'],
      [['--set', 'Hard.blur v2.blur_radius=99'], '--set Hard.blur v2.blur_radius: #3 ImageBlur "Hard.blur v2": blur_radius: must be at most 31 (from 1 to 31), got 99'],
      [['--input', 'imag=photo.png'], '--input: no node has an input "imag" holding a value; name the node: --input <node>.imag=…'],
    ];
    for (const [args, message] of cases) {
      const r = await cli(['run', SAVED, ...args, '--server', emu.url]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toBe(`platformui run: ${message}\n(see platformui run --help)\n`);
    }
    // A saved file's problems are not the command line's: exit 5, no "see --help" (issue 32).
    const broken = await cli(['run', unknownClass, '--server', emu.url]);
    expect(broken.code).toBe(5);
    expect(broken.stderr).toMatch(/^platformui run: .*unknown\.json: #2 ImageBlurr "Soft blur": this server has no node class "ImageBlurr" \(did you mean "ImageBlur"\?\)\n$/);
    const json = await cli(['run', unknownClass, '--json', '--server', emu.url]);
    expect(json.code).toBe(5);
    expect(json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { type: 'error', class: 'WorkflowFileError', code: 5, message: expect.stringMatching(/unknown\.json: #2 ImageBlurr "Soft blur": this server has no node class "ImageBlurr"/) },
    ]);
    expect(writes(emu)).toEqual([]);
  });
});

describe('platformui example saved', () => {
  it('writes a workflow as the editor saves it and the command that runs it by named inputs; that command runs', async () => {
    const emu = await startEmulator({ personality: 'local', cloud: { stepMs: 5 } });
    try {
      const at = mkdtempSync(join(dir, 'example-'));
      const wrote = await cli(['example', 'saved', '--out', at]);
      expect(wrote.code, wrote.stderr).toBe(0);
      expect(JSON.parse(readFileSync(join(at, 'saved.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(join(ROOT, 'examples', 'workflows', 'saved-in-editor.json'), 'utf8')));
      const command = /^ {2}platformui (run .*)$/m.exec(wrote.stdout)![1]!;
      expect(command).toBe(`run ${at}/saved.json --input Photo.image=${at}/photo.png --set Soften.blur_radius=5 --out ${at}/outputs`);
      const r = await cli([...command.split(' '), '--server', emu.url]);
      expect(r.code, r.stderr).toBe(0);
      expect(ran(emu, r.stdout)['3']!.inputs).toMatchObject({ blur_radius: 5, sigma: 1.5 });
      expect(readdirSync(join(at, 'outputs'))).toEqual(['portrait_00001_.png']);
    } finally {
      await emu.close();
    }
  });
});

describe('platformui run --widget-values', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'local', cloud: { stepMs: 5 } });
    emu.cloud.addFile('photo.png', makePng(8, 8, 1));
  });
  afterAll(() => emu.close());

  it('a node saved with fewer values than its class has: refused by default, naming the option; converted as the editor does with editor, and said', async () => {
    const file = join(dir, 'short.json');
    const saved = JSON.parse(readFileSync(SAVED, 'utf8'));
    saved.nodes[2].widgets_values = [4];
    writeFileSync(file, JSON.stringify(saved));
    emu.requests.length = 0;
    const strict = await cli(['run', file, '--server', emu.url]);
    expect(strict.code).toBe(5);
    expect(strict.stderr).toMatch(/^platformui run: .*short\.json: #3 ImageBlur "Hard\.blur v2": widgets_values has 1 value for the 2 widget values .* with --widget-values editor\n$/);
    expect(strict.stderr).not.toContain('widgetValues');
    const typo = await cli(['run', file, '--widget-values', 'edtor', '--server', emu.url]);
    expect(typo.stderr).toMatch(/^platformui run: --widget-values: must be strict or editor, got "edtor" \(did you mean editor\?\)/);
    expect(writes(emu)).toEqual([]);
    const lenient = await cli(['run', file, '--widget-values', 'editor', '--set', `filename_prefix=${unique('lenient')}`, '--out', outDir(), '--server', emu.url]);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toMatch(/^Warning: #3 ImageBlur "Hard\.blur v2": .*converted as the editor does, sigma = 1 filled in\n$/);
    expect(ran(emu, lenient.stdout)['3']!.inputs).toMatchObject({ blur_radius: 4, sigma: 1 });
  });
});

describe('platformui run --set by name on an API-format file', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ personality: 'local', cloud: { stepMs: 5 } });
  });
  afterAll(() => emu.close());

  it('takes title.input, input alone and id.input, and the older NODE.INPUT forms; asks for no object_info', async () => {
    emu.requests.length = 0;
    for (const name of ['Save Inverted.filename_prefix', 'filename_prefix', '3.filename_prefix', 'SaveImage.filename_prefix', '3.inputs.filename_prefix', '"Save Inverted".filename_prefix']) {
      const prefix = unique('api');
      const r = await cli(['run', INVERT, '--input', `Load Photo.image=${photo}`, '--set', `${name}=${prefix}`, '--out', outDir(), '--server', emu.url]);
      expect(r.code, `${name}\n${r.stderr}`).toBe(0);
      expect(ran(emu, r.stdout)['3']!.inputs.filename_prefix, name).toBe(prefix);
    }
    // NODE.INPUT also reaches an input a link feeds: the images saved straight from the loader.
    const relinked = await cli(['run', INVERT, '--input', `image=${photo}`, '--set', `3.inputs.images=["1", 0]`, '--set', `filename_prefix=${unique('relinked')}`, '--out', outDir(), '--server', emu.url]);
    expect(relinked.code, relinked.stderr).toBe(0);
    expect(ran(emu, relinked.stdout)['3']!.inputs.images).toEqual(['1', 0]);
    expect(objectInfoReads(emu)).toBe(0);
  });

  it('a title with dots is matched whole, in --input as in --set', async () => {
    const dotted = join(dir, 'dotted.json');
    const json = JSON.parse(readFileSync(INVERT, 'utf8'));
    json['1']._meta.title = 'Photo v1.2';
    writeFileSync(dotted, JSON.stringify(json));
    const r = await cli(['run', dotted, '--input', `Photo v1.2.image=${photo}`, '--set', `Photo v1.2.image="x.png"`, '--set', `filename_prefix=${unique('dotted')}`, '--out', outDir(), '--server', emu.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Uploaded .*photo\.png as \S+ for #1 LoadImage "Photo v1\.2"\.image$/m);
  });
});

// Several --server: the file is converted once, with the object_info of the first server that answers,
// and the pool places the converted workflow.
describe('platformui run on a file saved in the editor, over several --server', () => {
  let a: Emulator;
  beforeAll(async () => {
    a = await startEmulator({ personality: 'local', cloud: { stepMs: 5 } });
  });
  afterAll(() => a.close());

  it('converts with the first server that answers (a dead one skipped), then runs where the pool places it', async () => {
    const dead = await startEmulator({ personality: 'local' });
    const deadUrl = dead.url;
    await dead.close();
    a.requests.length = 0;
    const out = outDir();
    const prefix = unique('pool');
    const r = await cli(['run', SAVED, '--input', `image=${photo}`, '--set', `filename_prefix=${prefix}`, '--out', out, '--server', deadUrl, '--server', a.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Placed on ${a.url.replace(/[.:/]/g, '\\$&')}$`, 'm'));
    expect(readdirSync(out)).toEqual([`${prefix}_00001_.png`]);
    expect(ran(a, r.stdout)['4']!.inputs.filename_prefix).toBe(prefix);
  });

  it('run as saved, the pool converts it for the server it places it on, and sends the saved graph along', async () => {
    const b = await startEmulator({ personality: 'local', cloud: { stepMs: 5 } });
    for (const e of [a, b]) e.cloud.addFile('photo.png', makePng(8, 8, 2));
    const r = await cli(['run', SAVED, '--out', outDir(), '--server', a.url, '--server', b.url]);
    await b.close();
    expect(r.code, r.stderr).toBe(0);
    const id = /^Submitted job (\S+)$/m.exec(r.stdout)![1]!;
    const job = a.cloud.engine.jobs.get(id) ?? b.cloud.engine.jobs.get(id)!;
    expect(job.extraData.extra_pnginfo).toEqual({ workflow: JSON.parse(readFileSync(SAVED, 'utf8')) });
  });
});
