// A logger for tests that records every call, in order (issue 14's tests,
// unit and integration alike).
import type { Logger } from '../../src/index.ts';

export type Level = 'error' | 'warn' | 'info' | 'debug';

/** One recorded call: `logger.<level>(message, details)`. */
export interface Line {
  level: Level;
  message: string;
  details: Record<string, unknown> | undefined;
}

/** A logger that records every call, in order, with lookups by level and by message. */
export function recorder() {
  const lines: Line[] = [];
  const at = (level: Level) => (message: string, details?: Record<string, unknown>) => void lines.push({ level, message, details });
  const logger: Logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
  return { lines, logger, of: (level: Level) => lines.filter((l) => l.level === level), index: (re: RegExp) => lines.findIndex((l) => re.test(l.message)) };
}
