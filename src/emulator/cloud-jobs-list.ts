/**
 * `GET /api/jobs`: its query parameters and their rules in each dialect (a
 * table of data), and the filtering, sorting and paging of a lane's jobs.
 *
 * | parameter | cloud | local (the real server's rules) |
 * | --- | --- | --- |
 * | `status` | comma list of `pending, in_progress, completed, failed, cancelled` | the same without `cancelled` |
 * | `workflow_id` | exact match | exact match |
 * | `output_type` | `image` (`images` outputs), `video`, `audio` | not a parameter (ignored) |
 * | `sort_by` | `create_time` (default), `execution_time` | `created_at` (default), `execution_duration` |
 * | `sort_order` | `asc`, `desc` (default) | the same |
 * | `offset` | integer ≥ 0, default 0 | integer, negative read as 0 |
 * | `limit` | integer 1–1000, default 100 | positive integer, default none (`null`) |
 *
 * An invalid value is a {@link JobsQueryError}: 400, `{ error, message }` on
 * the cloud, `{ error: message }` on the local server.
 *
 * @module
 */
import type { Job } from './cloud-jobs.ts';
import { jobRecord, persistedOutputs, statusIn, workflowIdOf, type RecordClock, type RecordDialect } from './cloud-records.ts';

/** An invalid query parameter; answered with 400 and {@link JobsQueryError.body}. */
export class JobsQueryError extends Error {
  /** The 400 body in the dialect's shape. */
  readonly body: Record<string, string>;

  constructor(dialect: RecordDialect, message: string) {
    super(message);
    this.name = 'JobsQueryError';
    this.body = dialect === 'local' ? { error: message } : { error: 'bad_request', message };
  }
}

/** Execution duration, ms (0 until it has both ends). */
const duration = (j: Job): number => (j.started !== undefined && j.ended !== undefined ? j.ended - j.started : 0);

interface ListRules {
  readonly statuses: readonly string[];
  readonly sortKeys: Readonly<Record<string, (job: Job) => number>>;
  readonly defaultSort: string;
  readonly limit: { readonly default: number | null; readonly max: number };
  /** A negative offset is refused (`reject`) or read as 0 (`clamp`). */
  readonly negativeOffset: 'reject' | 'clamp';
  /** Whether `output_type` filters. */
  readonly outputType: boolean;
}

const RULES: Readonly<Record<RecordDialect, ListRules>> = {
  cloud: {
    statuses: ['pending', 'in_progress', 'completed', 'failed', 'cancelled'],
    sortKeys: { create_time: (j) => j.created, execution_time: duration },
    defaultSort: 'create_time',
    limit: { default: 100, max: 1000 },
    negativeOffset: 'reject',
    outputType: true,
  },
  local: {
    statuses: ['pending', 'in_progress', 'completed', 'failed'],
    sortKeys: { created_at: (j) => j.created, execution_duration: duration },
    defaultSort: 'created_at',
    limit: { default: null, max: Infinity },
    negativeOffset: 'clamp',
    outputType: false,
  },
};

/** `output_type` value → the outputs key it selects. */
const OUTPUT_KEYS: Readonly<Record<string, string>> = { image: 'images', video: 'video', audio: 'audio' };

/** An integer the way Python's `int()` reads a query value, or undefined. */
function integer(value: string): number | undefined {
  return /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : undefined;
}

/**
 * Answers `GET /api/jobs` over `jobs` (one lane's, oldest first) in
 * `dialect`: `{ jobs, pagination: { offset, limit, total, has_more } }`.
 * Throws {@link JobsQueryError} for an invalid parameter.
 */
export function listJobs(dialect: RecordDialect, jobs: Iterable<Job>, query: URLSearchParams, clock: RecordClock): Record<string, unknown> {
  const rules = RULES[dialect];
  const fail = (message: string): never => {
    throw new JobsQueryError(dialect, message);
  };

  const statusParam = query.get('status');
  let statuses: Set<string> | undefined;
  if (statusParam) {
    const wanted = statusParam.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
    const invalid = wanted.filter((s) => !rules.statuses.includes(s));
    if (invalid.length) fail(`Invalid status value(s): ${invalid.join(', ')}. Valid values: ${rules.statuses.join(', ')}`);
    statuses = new Set(wanted);
  }
  const sortBy = (query.get('sort_by') ?? rules.defaultSort).toLowerCase();
  const sortKey = rules.sortKeys[sortBy] ?? fail(`sort_by must be ${Object.keys(rules.sortKeys).map((k) => `'${k}'`).join(' or ')}`);
  const sortOrder = (query.get('sort_order') ?? 'desc').toLowerCase();
  if (sortOrder !== 'asc' && sortOrder !== 'desc') fail("sort_order must be 'asc' or 'desc'");

  let limit = rules.limit.default;
  const rawLimit = query.get('limit');
  if (rawLimit !== null) {
    const n = integer(rawLimit) ?? fail('limit must be an integer');
    if (n <= 0 || n > rules.limit.max) fail(rules.limit.max === Infinity ? 'limit must be a positive integer' : `limit must be between 1 and ${rules.limit.max}`);
    limit = n;
  }
  let offset = 0;
  const rawOffset = query.get('offset');
  if (rawOffset !== null) {
    offset = integer(rawOffset) ?? fail('offset must be an integer');
    if (offset < 0) offset = rules.negativeOffset === 'clamp' ? 0 : fail('offset must be a non-negative integer');
  }
  const outputKey = rules.outputType && query.get('output_type') !== null ? (OUTPUT_KEYS[query.get('output_type')!] ?? fail("output_type must be 'image', 'video' or 'audio'")) : undefined;
  const workflowId = query.get('workflow_id') || undefined;

  const hasOutput = (job: Job, key: string) => Object.values(persistedOutputs(job, clock)).some((o) => Array.isArray(o[key]) && (o[key] as unknown[]).length > 0);
  const sign = sortOrder === 'asc' ? 1 : -1;
  const selected = [...jobs]
    .filter((j) => (!statuses || statuses.has(statusIn(dialect, j))) && (!workflowId || workflowIdOf(j) === workflowId) && (!outputKey || hasOutput(j, outputKey)))
    // Ties (same millisecond) in submission order, so "newest first" holds.
    .sort((a, b) => sign * (sortKey(a) - sortKey(b) || a.number - b.number));
  const page = selected.slice(offset, limit === null ? undefined : offset + limit);
  return {
    jobs: page.map((j) => jobRecord(dialect, j, clock, false)),
    pagination: { offset, limit, total: selected.length, has_more: offset + page.length < selected.length },
  };
}
