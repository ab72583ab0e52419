/**
 * `platformui example [NAME] [--out DIR]`: writes a ready-to-run example (a
 * workflow and its input, bundled in the command line, so it works from an
 * installed package) and prints the command that runs it. Never overwrites a
 * file: one that holds the same example already is kept, any other stops it
 * before anything is written.
 *
 * @module
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import invert from '../../../examples/workflows/invert.json';
import saved from '../../../examples/workflows/saved-in-editor.json';
import { makePng } from '../../emulator/cloud-files.ts';
import { didYouMean } from '../../args.ts';
import { unreadable, UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import { table } from '../format.ts';

/** One example: its files, what they are, and the command that runs them (paths as `at` writes them). */
interface Example {
  files: Array<{ name: string; content: () => string | Uint8Array; what: string }>;
  run: (at: (name: string) => string) => string;
}

const EXAMPLES: Record<string, Example> = {
  invert: {
    files: [
      { name: 'invert.json', content: () => `${JSON.stringify(invert, null, 2)}\n`, what: 'a workflow: LoadImage → ImageInvert → SaveImage' },
      { name: 'photo.png', content: () => makePng(64, 64, 0x2040c0), what: 'its input, a 64×64 PNG' },
    ],
    run: (at) => `platformui run ${at('invert.json')} --input image=${at('photo.png')} --out ${at('outputs')}`,
  },
  saved: {
    files: [
      { name: 'saved.json', content: () => `${JSON.stringify(saved, null, 2)}\n`, what: "a workflow as the editor saves it (titles, a note, a reroute, a primitive node)" },
      { name: 'photo.png', content: () => makePng(64, 64, 0x2040c0), what: 'its input, a 64×64 PNG' },
    ],
    run: (at) => `platformui run ${at('saved.json')} --input Photo.image=${at('photo.png')} --set Soften.blur_radius=5 --out ${at('outputs')}`,
  },
};

/** A path as a shell reads it: quoted when it holds anything but letters, digits and `_./-`. */
function shellWord(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `platformui example`. */
export const example: Command = {
  name: 'example',
  summary: 'write a ready-to-run example workflow and its input, and say how to run it',
  synopsis: '[NAME] [--out DIR]',
  description: [
    `Writes an example into DIR (default: .) and prints the command that runs it. Examples: ${Object.keys(EXAMPLES).join(', ')}`,
    '(default invert: invert.json, a workflow that inverts an image, and photo.png, its input;',
    'saved: saved.json, a workflow as the editor saves it, with the same photo.png).',
    'Never overwrites a file: one that holds the same example already is kept.',
  ].join('\n'),
  options: {
    out: { type: 'string', value: 'DIR', help: 'where to write the files (default: .; created if missing)' },
  },
  args: { min: 0, max: 1 },
  service: 'none',
  examples: ['platformui example', 'platformui example invert --out demo', 'platformui example saved'],
  async run(ctx, { values, positionals }) {
    const name = positionals[0] ?? 'invert';
    const chosen = Object.hasOwn(EXAMPLES, name) ? EXAMPLES[name] : undefined;
    if (!chosen) throw new UsageError(`no example ${JSON.stringify(name)}${didYouMean(name, Object.keys(EXAMPLES))}: the examples are ${Object.keys(EXAMPLES).join(', ')}`);
    const dir = typeof values.out === 'string' ? values.out : '.';
    const at = (file: string) => join(dir, file);
    // Every file checked before any is written: a half-written example helps no one.
    const plan = await Promise.all(
      chosen.files.map(async (f) => {
        const content = f.content();
        const bytes = typeof content === 'string' ? Buffer.from(content) : content;
        const existing = await readFile(at(f.name)).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return undefined;
          throw unreadable('--out', at(f.name), err);
        });
        if (existing && !existing.equals(bytes)) throw new UsageError(`${at(f.name)} exists and is not this example's: it was left alone; write the example elsewhere with --out DIR`);
        return { ...f, bytes, kept: existing !== undefined };
      }),
    );
    await mkdir(dir, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`--out: cannot create ${dir} (${err.code ?? err.message})`);
    });
    // `wx`: should a file appear meanwhile, it is still not overwritten.
    for (const f of plan) if (!f.kept) await writeFile(at(f.name), f.bytes, { flag: 'wx' });
    const next = chosen.run((file) => shellWord(at(file)));
    if (ctx.mode === 'json') {
      ctx.printJSON({ example: name, files: plan.map((f) => ({ path: at(f.name), written: !f.kept })), run: next });
      return 0;
    }
    for (const line of table(plan.map((f) => [f.kept ? 'Kept' : 'Wrote', at(f.name), `${f.what}${f.kept ? ' (there already)' : ''}`]))) ctx.print(line);
    ctx.print('Run it (on the server of PLATFORMUI_CLOUD_URL, with PLATFORMUI_API_KEY; or --server URL):');
    ctx.print(`  ${next}`);
    return 0;
  },
};
