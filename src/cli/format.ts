/**
 * Plain-text formatting shared by the listing commands: aligned columns,
 * times, clipped text. No colours here: `Context.style` adds them on a terminal.
 *
 * @module
 */

/** Rows as aligned columns (the last column is not padded), two spaces apart. */
export function table(rows: ReadonlyArray<ReadonlyArray<string>>): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}

/**
 * A server time as ISO 8601 (seconds): servers send Unix seconds (the cloud)
 * or milliseconds (a local server); anything before 2001 in ms is taken as seconds.
 */
export function formatTime(value: number | null | undefined): string {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return '-';
  const ms = value < 1e12 ? value * 1000 : value;
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** At most `max` characters, with `…` when cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
