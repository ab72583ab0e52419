/**
 * The small grammars of the command line: durations (`10m`), assignments
 * (`6.inputs.text="a cat"`), `--set` values, node targets, and the
 * {@link UsageError} every one of them throws (exit code 2).
 *
 * @module
 */

/** The command line is wrong: exit code 2, with what is wrong and the command's usage hint. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** `value`, refused when blank: an empty filter or name would match nothing, or everything, at the cost of a request. */
export function nonEmpty(value: string, what: string): string {
  if (value.trim() === '') throw new UsageError(`${what}: empty`);
  return value;
}

/** The usage error of a file the command line could not read or stat: `--file: cannot read a.json (ENOENT)`. */
export const unreadable = (what: string, path: string, err: unknown): UsageError =>
  new UsageError(`${what ? `${what}: ` : ''}cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
/** The longest timer Node keeps (a longer one fires at once); the SDK refuses more too. */
const MAX_MS = 2_147_483_647;

/**
 * `10m`, `90s`, `1h`, `1.5h`, `250ms` or a bare number of milliseconds → milliseconds.
 *
 * @example
 * ```ts
 * parseDuration('10m', '--timeout'); // 600000
 * ```
 */
export function parseDuration(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i.exec(text.trim());
  const ms = m ? Math.round(Number(m[1]) * UNIT_MS[(m[2] ?? 'ms').toLowerCase()]!) : NaN;
  if (!(ms > 0 && ms <= MAX_MS)) throw new UsageError(`${option} must be a duration like 90s, 10m, 1h or a number of milliseconds (at most 24 days), got ${JSON.stringify(text)}`);
  return ms;
}

/** A positive whole number option (`--limit 20`). */
export function parsePositiveInt(text: string, option: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!(Number.isSafeInteger(n) && n >= 1 && n <= max)) throw new UsageError(`${option} must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

/** `left=right`, split at the first `=`; both sides must be there. */
export function parseAssignment(text: string, option: string, shape: string): { left: string; right: string } {
  const at = text.indexOf('=');
  if (at <= 0) throw new UsageError(`${option} takes ${shape}, got ${JSON.stringify(text)}`);
  return { left: text.slice(0, at), right: text.slice(at + 1) };
}

/**
 * A `--set` value: JSON when it parses (`42`, `true`, `null`, `["4", 0]`,
 * `"007"` for a string of digits), the text itself otherwise (`a cat`).
 */
export function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Where a `--set` or `--input` goes: a node (an id, a title or a class, see
 * `targets.ts`) and one of its inputs, or an input name alone (`--input image=…`).
 */
export interface Target {
  /** The node as written: an id, a title or a class type; undefined for an input name alone. */
  node: string | undefined;
  input: string;
}

/**
 * `6.inputs.text`, `6.text`, `"Load Photo".image`, `LoadImage.image`, or (when
 * `bare` is allowed) `image` alone. A quoted node may hold dots; otherwise the
 * node ends at `.inputs.` or at the first dot.
 */
export function parseTarget(text: string, option: string, bare: boolean): Target {
  const fail = (): never => {
    throw new UsageError(
      `${option}: ${JSON.stringify(text)} names no input: write <node>.<input> (node: an id, a "title" or a class${bare ? '), or the input alone' : ')'}, like 6.inputs.text or "Load Photo".image`,
    );
  };
  let node: string;
  let rest: string;
  if (text.startsWith('"')) {
    const end = text.indexOf('"', 1);
    if (end < 0 || text[end + 1] !== '.') return fail();
    node = text.slice(1, end);
    rest = text.slice(end + 2);
  } else {
    const inputs = text.indexOf('.inputs.');
    const dot = inputs > 0 ? inputs : text.indexOf('.');
    if (dot < 0) return bare && text !== '' ? { node: undefined, input: text } : fail();
    node = text.slice(0, dot);
    rest = text.slice(dot + 1);
  }
  const input = rest.startsWith('inputs.') ? rest.slice('inputs.'.length) : rest;
  if (node === '' || input === '') return fail();
  return { node, input };
}
