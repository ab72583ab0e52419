/**
 * `platformui nodes search`: the registry's custom nodes matching a text,
 * an operating system and an accelerator; one page, or every page with `--all`.
 *
 * @module
 */
import type { Node } from '../../index.ts';
import { nonEmpty, parsePositiveInt } from '../args.ts';
import type { Command } from '../command.ts';
import type { Context } from '../context.ts';
import { clip, table } from '../format.ts';

const row = (n: Node): string[] => [n.id ?? '-', clip(n.name ?? '', 40), n.latest_version?.version ?? '-', n.publisher?.id ?? '-', n.downloads === undefined ? '-' : String(n.downloads)];
const HEAD = ['ID', 'NAME', 'VERSION', 'PUBLISHER', 'DOWNLOADS'];

function printTable(ctx: Context, nodes: readonly Node[]): void {
  const [head, ...body] = table([HEAD, ...nodes.map(row)]);
  ctx.print(ctx.style('bold', head!));
  for (const line of body) ctx.print(line);
}

/** `platformui nodes search`. */
export const nodesSearch: Command = {
  name: 'nodes search',
  summary: 'search the registry for custom nodes',
  synopsis: '[text] [--os OS] [--accelerator NAME] [--limit N] [--page N] [--all]',
  description: 'Searches the node registry by text, operating system and accelerator. One page of --limit results\n(default 10), or every result with --all (fetched a page at a time). No credentials are sent.',
  options: {
    os: { type: 'string', value: 'OS', help: 'only nodes supporting this OS (as the registry writes it: "OS Independent", "MacOS", …)' },
    accelerator: { type: 'string', value: 'NAME', help: 'only nodes supporting this accelerator (CUDA, ROCm, Metal, DirectML, CPU)' },
    limit: { type: 'string', value: 'N', help: 'results per page (default 10)' },
    page: { type: 'string', value: 'N', help: 'which page (default 1)' },
    all: { type: 'boolean', help: 'every result, page after page' },
  },
  args: { min: 0, max: 1 },
  service: 'registry',
  examples: ['platformui nodes search upscale --accelerator CUDA --all'],
  async run(ctx, { values, positionals }) {
    const limit = typeof values.limit === 'string' ? parsePositiveInt(values.limit, '--limit') : undefined;
    const page = typeof values.page === 'string' ? parsePositiveInt(values.page, '--page') : undefined;
    const params = {
      ...(positionals[0] !== undefined ? { search: positionals[0] } : {}),
      ...(typeof values.os === 'string' ? { supported_os: nonEmpty(values.os, '--os') } : {}),
      ...(typeof values.accelerator === 'string' ? { supported_accelerator: nonEmpty(values.accelerator, '--accelerator') } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(page !== undefined ? { page } : {}),
    };
    const registry = await ctx.registry();
    if (values.all) {
      // Streamed: each page is printed as it arrives (JSON lines), or gathered for one aligned table.
      const found: Node[] = [];
      for await (const node of registry.searchNodes(params)) {
        if (ctx.mode === 'json') ctx.printJSON(node);
        else found.push(node);
      }
      if (ctx.mode !== 'json') {
        if (found.length) printTable(ctx, found);
        ctx.print(ctx.style('dim', found.length ? `${found.length} node${found.length === 1 ? '' : 's'}` : 'no nodes'));
      }
      return 0;
    }
    const result = await registry.searchNodes(params);
    if (ctx.mode === 'json') {
      for (const node of result.nodes) ctx.printJSON(node);
      return 0;
    }
    if (result.nodes.length) printTable(ctx, result.nodes);
    const more = result.hasNextPage() ? `; --all for every one, or --page ${result.page + 1}` : '';
    // No page at all ("page 1 of 0") or past the last one: said as such.
    const summary =
      result.total === 0 ? 'no nodes'
      : result.nodes.length === 0 ? `no nodes on page ${result.page}: ${result.total} nodes on ${result.totalPages} page${result.totalPages === 1 ? '' : 's'}`
      : `page ${result.page} of ${result.totalPages}: ${result.nodes.length} of ${result.total} nodes${more}`;
    ctx.print(ctx.style('dim', summary));
    return 0;
  },
};
