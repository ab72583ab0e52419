/**
 * `platformui-codegen`: an alias of `platformui codegen`, the same command
 * with the same options (`--help` for them):
 *
 *     platformui-codegen --url http://127.0.0.1:8188 --out src/nodes.generated.ts
 *     platformui-codegen --file object_info.json --out src/nodes.generated.ts
 *
 * It runs the command line's bundle, `cli.js` beside this file in `dist/`,
 * rather than carry a second copy of it (the import is left for run time).
 *
 * @module
 */
process.argv.splice(2, 0, 'codegen');
await import(new URL('./cli.js', import.meta.url).href);
