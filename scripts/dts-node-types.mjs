// After tsup: the declarations of the Node-only entries reference Node's types themselves.
// emulator.d.ts names `node:http` and `Buffer`; a consumer's compiler finds them only when
// @types/node is loaded, and TypeScript 6 and 7 no longer load every installed @types package
// (`types` defaults to []), so without this line `import … from '@platformui/sdk/emulator'`
// fails with TS2591 unless the user adds `"types": ["node"]` (issue 32). The root, /schemas and
// /codegen run in browsers too: they get no such line, so they never pull Node's globals into
// a browser project (test/packaging/pack.mjs checks both).
// Usage: node scripts/dts-node-types.mjs (after tsup).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The Node-only entries, as their names in dist/ (the packaging test reads this list too). */
export const NODE_ONLY = ['emulator', 'queue'];
const REFERENCE = '/// <reference types="node" />\n';

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dist = join(import.meta.dirname, '..', 'dist');
  for (const entry of NODE_ONLY) {
    for (const file of [`${entry}.d.ts`, `${entry}.d.cts`]) {
      const path = join(dist, file);
      const text = readFileSync(path, 'utf8');
      if (!text.startsWith(REFERENCE)) writeFileSync(path, REFERENCE + text);
    }
  }
}
