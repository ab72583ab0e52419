/**
 * `platformui-codegen`: writes the TypeScript node types of a server (from
 * its `object_info`) for `Workflow<Nodes>`. Node only; `--help` for usage.
 *
 *     platformui-codegen --url http://127.0.0.1:8188 --out src/nodes.generated.ts
 *     platformui-codegen --file object_info.json --out src/nodes.generated.ts
 *
 * @module
 */
import { runCodegen } from './codegen-command.ts';

process.exitCode = await runCodegen(process.argv.slice(2));
