/**
 * `platformui jobs`: the account's recent jobs (`GET /api/jobs`), newest
 * first, on servers that have a jobs list; elsewhere one line saying so.
 *
 * @module
 */
import { InvalidArgumentError, NotFoundError } from '../../index.ts';
import { JOB_STATUSES } from '../../schemas/values.ts';
import { didYouMean } from '../../args.ts';
import { nonEmpty, parsePositiveInt, UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import { serverMessage } from '../errors.ts';
import { formatTime, table } from '../format.ts';

/** `platformui jobs`. */
/** The command line's job statuses as a Comfy API v2 server's (queued, running, canceling, succeeded, failed, canceled, expired). */
const V2_STATUSES: Record<string, string[]> = { pending: ['queued'], in_progress: ['running', 'canceling'], completed: ['succeeded'], failed: ['failed', 'expired'], cancelled: ['canceled'] };

export const jobs: Command = {
  name: 'jobs',
  summary: 'recent jobs, newest first (where the server has a jobs list)',
  synopsis: '[--status STATUS,…] [--limit N]',
  description: 'Lists recent jobs, newest first: id, status, creation time, outputs, error. The cloud and recent local servers have a jobs list; on others, use `platformui job <id>` or `platformui queue`.',
  options: {
    status: { type: 'string', multiple: true, value: 'STATUS', help: 'only jobs in these states: pending, in_progress, completed, failed, cancelled (comma-separated or repeated)' },
    limit: { type: 'string', value: 'N', help: 'at most N jobs (1-1000, default 20)' },
    quiet: { type: 'boolean', short: 'q', help: 'only the ids, one a line (for $(…))' },
  },
  args: { min: 0, max: 0 },
  service: 'cloud',
  examples: ['platformui jobs --status failed,cancelled --limit 10', 'platformui jobs --limit 1 --quiet'],
  async run(ctx, { values }) {
    if (values.quiet && ctx.mode === 'json') throw new UsageError('--quiet prints bare ids, --json objects: give one');
    const status = (Array.isArray(values.status) ? values.status : []).flatMap((s) => String(s).split(',')).map((s) => s.trim()).filter(Boolean);
    // `--status ''` would list every job: the opposite of a filter.
    if (Array.isArray(values.status) && status.length === 0) nonEmpty('', '--status');
    // Checked here: a misspelt status would otherwise cost a request and read as "no jobs".
    const unknown = status.find((s) => !(JOB_STATUSES as readonly string[]).includes(s));
    if (unknown !== undefined) throw new UsageError(`--status: unknown status ${JSON.stringify(unknown)}${didYouMean(unknown, JOB_STATUSES)}; the statuses are ${JOB_STATUSES.join(', ')}`);
    const limit = typeof values.limit === 'string' ? parsePositiveInt(values.limit, '--limit', 1000) : 20;
    const cloud = await ctx.cloud();
    let page;
    try {
      // A Comfy API v2 server names its states its own way: the command line's names (those `platformui job` shows) mapped onto them.
      const wanted = cloud.server === 'v2' ? [...new Set(status.flatMap((s) => V2_STATUSES[s] ?? [s]))] : status;
      page = await cloud.listJobs({ limit, ...(wanted.length ? { status: wanted as (typeof JOB_STATUSES)[number][] } : {}) });
    } catch (err) {
      // A status this kind of server does not have (a local server has no `cancelled`): said as the option's.
      if (err instanceof InvalidArgumentError && err.field?.startsWith('params.status')) {
        throw new UsageError(`--status: this server's jobs list has no such status: ${err.message.slice(err.field.length + 2)}`);
      }
      // A list is never "not found": a 404 here is a server without the route (aiohttp's text, or JSON).
      // What the server says of it, when more than "not found", may say where the route is.
      if (err instanceof NotFoundError) {
        const said = serverMessage(err);
        const own = said && !/^(404:? )?not found$/i.test(said) ? `: ${said}` : '';
        throw new Error(`this server has no jobs list (GET /api/jobs: 404${own}): see one job with \`platformui job <id>\`, or what runs with \`platformui queue\``);
      }
      throw err;
    }
    // A v2 server of the published spec has no status filter (it lists every job): the rows are filtered here too.
    const v2Wanted = cloud.server === 'v2' && status.length ? new Set(status.flatMap((s) => V2_STATUSES[s] ?? [s])) : undefined;
    const listed = v2Wanted ? page.jobs.filter((j) => v2Wanted.has(j.status)) : page.jobs;
    if (values.quiet) {
      for (const j of listed) ctx.print(j.id);
      return 0;
    }
    if (ctx.mode === 'json') {
      for (const j of listed) ctx.printJSON(j);
      return 0;
    }
    if (listed.length === 0) {
      ctx.print(status.length ? `no ${status.join(' or ')} jobs` : 'no jobs');
      return 0;
    }
    const rows = listed.map((j) => {
      const e = j.execution_error as { exception_type?: unknown } | null | undefined;
      // On a Comfy API v2 server: its phase (the status `platformui job` shows) and its created_at.
      const v2 = cloud.server === 'v2' ? (j as { phase?: unknown; created_at?: unknown }) : undefined;
      const shown = typeof v2?.phase === 'string' ? v2.phase : j.status;
      const created = typeof v2?.created_at === 'string' ? Date.parse(v2.created_at) : j.create_time;
      return [j.id, shown, formatTime(created), j.outputs_count == null ? '-' : String(j.outputs_count), typeof e?.exception_type === 'string' ? e.exception_type : ''];
    });
    const [head, ...body] = table([['ID', 'STATUS', 'CREATED', 'OUTPUTS', 'ERROR'], ...rows]);
    ctx.print(ctx.style('bold', head!));
    for (const line of body) ctx.print(line);
    const total = page.pagination.total;
    if (page.hasNextPage()) ctx.print(ctx.style('dim', `${page.jobs.length} of ${typeof total === 'number' ? total : 'more'}: --limit N shows more`));
    return 0;
  },
};
