// After tsup: marks type-only exports as such in the bundled .d.ts files.
// The dts bundler flattens `export type { CloudSocket }` and `export type * from …`
// into a plain `export { … }`, so a consumer of dist/ could import a class or a
// schema as a value that the JavaScript does not export (a runtime SyntaxError, and
// the DOM's `Node` shadowed). Every name the built JavaScript does not export
// becomes `type`. Usage: node scripts/dts-type-only.mjs (after `tsup`).
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const dist = join(import.meta.dirname, '..', 'dist');
for (const entry of ['index', 'schemas', 'emulator', 'queue']) {
  const runtime = new Set(Object.keys(await import(pathToFileURL(join(dist, `${entry}.js`)).href)));
  for (const file of [`${entry}.d.ts`, `${entry}.d.cts`]) {
    const path = join(dist, file);
    let text = readFileSync(path, 'utf8');
    // `export { a, b as c };` and `export { a, b as c } from './chunk.js';` (not `export type { … }`).
    const statement = /^export \{ ([^}]*) \}( from '[^']+')?;$/gm;
    // `local as exported`: what a consumer imports is the exported name.
    const exported = (n) => n.split(/\s+as\s+/).pop();
    const seen = [];
    let marked = 0;
    text = text.replace(statement, (_, list, from = '') => {
      const names = list.split(',').map((n) => n.trim()).filter(Boolean);
      seen.push(...names.map(exported));
      const out = names.map((n) => (runtime.has(exported(n)) ? n : (marked++, `type ${n}`)));
      return `export { ${out.join(', ')} }${from};`;
    });
    const missing = [...runtime].filter((r) => r !== 'default' && !seen.includes(r));
    if (missing.length) throw new Error(`${file}: the JavaScript exports ${missing.join(', ')} but the declarations do not`);
    writeFileSync(path, text);
    console.log(`${file}: ${runtime.size} values, ${marked} names marked type-only`);
  }
}
