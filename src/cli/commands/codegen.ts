/**
 * `platformui codegen`: the `platformui-codegen` bin as a command (the same
 * `runCodegen`), with the CLI's global options: `--server` is its `--url`,
 * `--api-key-file` its own (the key from `PLATFORMUI_API_KEY` otherwise).
 *
 * @module
 */
import { runCodegen } from '../../workflow/codegen-command.ts';
import { UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import { readSecret } from '../context.ts';

/** `platformui codegen`. */
export const codegen: Command = {
  name: 'codegen',
  summary: "write TypeScript node types from a server's object_info (for Workflow<Nodes>)",
  synopsis: '[--file object_info.json] [--out file.ts] [options]',
  description: "Writes the TypeScript node types of a server (its object_info over --server, or a file) for\nWorkflow<Nodes>, like platformui-codegen. Writes only when the types changed.",
  options: {
    file: { type: 'string', value: 'PATH', help: 'read object_info from a JSON file instead of the server (platformui object-info --json writes one)' },
    out: { type: 'string', value: 'PATH', help: 'file to write (default: standard output)' },
    name: { type: 'string', value: 'TypeName', help: 'name of the exported interface (default: Nodes)' },
    'import-from': { type: 'string', value: 'MODULE', help: "module the SDK's types are imported from (default: @platformui/sdk)" },
    'max-combo-values': { type: 'string', value: 'N', help: 'type a combo with more values than this as string (default: 1000)' },
  },
  args: { min: 0, max: 0 },
  service: 'cloud',
  examples: ['platformui codegen --server http://127.0.0.1:8188 --out src/nodes.generated.ts'],
  async run(ctx, { values }) {
    const argv: string[] = [];
    for (const name of ['file', 'out', 'name', 'import-from', 'max-combo-values']) {
      const value = values[name];
      if (typeof value === 'string') argv.push(`--${name}`, value);
    }
    if (ctx.global.server !== undefined) {
      if (typeof values.file === 'string') throw new UsageError('give --server or --file, not both');
      argv.push('--url', ctx.global.server);
    }
    if (typeof values.file !== 'string') {
      // Checked as every command checks them (exit 2 for an unreadable or empty key file, for a bad
      // URL; exit 3 without a key), and so the key rule's hint can name what to do on a refused key.
      if (ctx.global.apiKeyFile !== undefined) {
        await readSecret(ctx.global.apiKeyFile, '--api-key-file');
        argv.push('--api-key-file', ctx.global.apiKeyFile);
      }
      await ctx.cloud();
    }
    // Its failures are thrown (rethrow), for main to report with the CLI's exit codes and lines.
    return runCodegen(argv, { stdout: (t) => void ctx.io.stdout.write(t), stderr: (t) => void ctx.io.stderr.write(t.replace(/^platformui-codegen:/gm, 'platformui codegen:')), rethrow: true });
  },
};
