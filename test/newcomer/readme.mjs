// README.md's code blocks, as the newcomer run sees them.
//
// The convention (README.md keeps it, and this file enforces it): every fenced
// block in ts, js or sh is run unless the line before it (blank lines aside) is
// one of these comments, which GitHub does not render:
//
//   <!-- newcomer: not run — <why> -->   skipped, and the reason is printed
//   <!-- newcomer: set-up -->            the fresh-clone commands (the "Set-up" step runs them)
//
// Any other `<!-- newcomer: … -->` is an error, so a typo never silently skips
// a block. Output blocks (```text) are not code and need nothing.
import { readFileSync } from 'node:fs';

/** The languages the run executes: TypeScript/JavaScript as scripts, shell line by line. */
export const CODE_LANGS = { ts: 'script', js: 'script', sh: 'shell', bash: 'shell', shell: 'shell' };

const MARKER = /^<!--\s*newcomer:\s*(.*?)\s*-->\s*$/;
const NOT_RUN = /^not run\s*[—–-]+\s*(\S.*)$/;

/**
 * Every fenced block of a Markdown text: `{ line, lang, kind, source, heading, mode, reason }`.
 * `line` is the fence's line number (1-based), `heading` the nearest heading above it,
 * `kind` 'script' | 'shell' | undefined (not code), `mode` 'run' | 'not run' | 'set-up'.
 * Throws on a marker it does not know or one that precedes no code block.
 */
export function parseBlocks(markdown, file = 'README.md') {
  const lines = markdown.split('\n');
  const blocks = [];
  let heading = '';
  let marker; // { text, line } of the last marker not yet used
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i];
    const m = MARKER.exec(text.trim());
    if (m) {
      if (marker) throw new Error(`${file}:${marker.line}: marker "${marker.text}" is followed by another marker, not a code block`);
      marker = { text: m[1], line: i + 1 };
      continue;
    }
    if (/^#{1,6}\s/.test(text)) heading = text.replace(/^#+\s*/, '').trim();
    const fence = /^(\s*)(`{3,})\s*([\w-]*)/.exec(text);
    if (!fence) {
      if (marker && text.trim() !== '') throw new Error(`${file}:${marker.line}: marker "${marker.text}" must be right above a code block`);
      continue;
    }
    const start = i;
    const body = [];
    for (i++; i < lines.length && !lines[i].trim().startsWith(fence[2]); i++) body.push(lines[i].slice(fence[1].length));
    const lang = fence[3].toLowerCase();
    const block = { line: start + 1, lang, kind: CODE_LANGS[lang], heading, source: body.join('\n'), mode: 'run', reason: '' };
    if (marker) {
      const notRun = NOT_RUN.exec(marker.text);
      if (notRun) Object.assign(block, { mode: 'not run', reason: notRun[1] });
      else if (marker.text === 'set-up') block.mode = 'set-up';
      else throw new Error(`${file}:${marker.line}: unknown marker "${marker.text}" (use "not run — <why>" or "set-up")`);
      if (!block.kind) throw new Error(`${file}:${marker.line}: marker "${marker.text}" is above a ${lang || 'plain'} block, which is never run`);
      marker = undefined;
    }
    blocks.push(block);
  }
  if (marker) throw new Error(`${file}:${marker.line}: marker "${marker.text}" precedes no code block`);
  return blocks;
}

/** The code blocks (ts, js, sh) of README.md at `path`. */
export function readmeBlocks(path) {
  return parseBlocks(readFileSync(path, 'utf8'), 'README.md').filter((b) => b.kind);
}

/** A shell block's commands: one per line, `# comments` and blank lines dropped. */
export function shellCommands(source) {
  return source.split('\n').map((l) => stripComment(l).trim()).filter(Boolean);
}

/** `cmd --x # why` → `cmd --x` (a `#` only after whitespace and outside quotes starts a comment). */
export function stripComment(line) {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i);
  }
  return line;
}

/** "README.md:123 RegistryClient (ts)" */
export const blockName = (b) => `README.md:${b.line} ${b.heading} (${b.lang})`;
