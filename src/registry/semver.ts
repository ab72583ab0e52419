/**
 * Semantic-version precedence (semver.org §11), for ordering a node's
 * versions: the registry lists them in no particular order.
 *
 * @module
 */

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?$/;

/** Whether `version` is a semantic version (`1.2.3`, `2.0.0-rc.1`, `1.0.0+build.5`). */
export const isSemver = (version: string): boolean => SEMVER.test(version);

/** Whether `version` is a release `x.y.z` (no pre-release, no build). */
export const isRelease = (version: string): boolean => /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.test(version);

/**
 * Compares two versions by semver precedence, newest first: negative when
 * `a` is newer. `2.0.0-rc.1` before `1.10.0`, `1.10.0` before
 * `1.10.0-beta.1`, `1.10.0` before `1.9.0`. A string that is not semver
 * sorts after every semver one (in text order among themselves).
 */
export function newestFirst(a: string, b: string): number {
  const x = SEMVER.exec(a);
  const y = SEMVER.exec(b);
  if (!x || !y) return x ? -1 : y ? 1 : a < b ? -1 : a > b ? 1 : 0;
  for (let i = 1; i <= 3; i++) {
    const d = Number(y[i]) - Number(x[i]);
    if (d !== 0) return d;
  }
  // A pre-release has lower precedence than its release.
  if (x[4] === undefined || y[4] === undefined) return x[4] === undefined ? (y[4] === undefined ? 0 : -1) : 1;
  const pa = x[4].split('.');
  const pb = y[4].split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const p = pa[i];
    const q = pb[i];
    if (p === undefined || q === undefined) return p === undefined ? 1 : -1; // more fields: higher
    if (p === q) continue;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) return Number(q) - Number(p);
    if (pn !== qn) return pn ? 1 : -1; // numeric identifiers are lower than alphanumeric ones
    return p < q ? 1 : -1;
  }
  return 0;
}
