/**
 * `platformui publishers`: every publisher of the registry.
 *
 * @module
 */
import type { Command } from '../command.ts';
import { clip, table } from '../format.ts';

/** `platformui publishers`. */
export const publishers: Command = {
  name: 'publishers',
  summary: "the registry's publishers",
  synopsis: '',
  description: 'Lists every publisher of the node registry: id, name, status, website. No credentials are sent.',
  options: {},
  args: { min: 0, max: 0 },
  service: 'registry',
  examples: ['platformui publishers', 'platformui publishers --json'],
  async run(ctx) {
    const registry = await ctx.registry();
    const list = await registry.listPublishers();
    if (ctx.mode === 'json') {
      for (const p of list) ctx.printJSON(p);
      return 0;
    }
    if (list.length) {
      const [head, ...body] = table([['ID', 'NAME', 'STATUS', 'WEBSITE'], ...list.map((p) => [p.id ?? '-', clip(p.name ?? '', 40), p.status ?? '-', p.website ?? ''])]);
      ctx.print(ctx.style('bold', head!));
      for (const line of body) ctx.print(line);
    }
    ctx.print(ctx.style('dim', `${list.length} publisher${list.length === 1 ? '' : 's'}`));
    return 0;
  },
};
