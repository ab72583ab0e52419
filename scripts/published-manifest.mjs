// The package.json that `npm pack` and `npm publish` put in the tarball: this one without `prepare`.
// `prepare` builds dist/ on `npm ci` here and on `npm install git+…` (npm runs it there, and only
// there); in an installed tarball it would never run, yet npm 11 lists it on every install:
// "1 package has install scripts not yet covered by allowScripts: @platformui/sdk (prepare: …)"
// (issue 32). So `prepack` builds and then strips it; `postpack` puts the original file back (a
// rename: its modification time stays, so scripts/ensure-built.mjs sees nothing changed).
// A pack that failed in between leaves the original beside it, and the next strip or restore
// starts from that.
//
//   node scripts/published-manifest.mjs strip | restore
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const manifest = join(root, 'package.json');
const original = join(root, '.package.json.unpacked');

const mode = process.argv[2];
if (mode === 'strip') {
  if (!existsSync(original)) renameSync(manifest, original);
  const pkg = JSON.parse(readFileSync(original, 'utf8'));
  delete pkg.scripts.prepare;
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (mode === 'restore') {
  if (existsSync(original)) renameSync(original, manifest);
} else {
  console.error('usage: node scripts/published-manifest.mjs strip | restore');
  process.exit(2);
}
