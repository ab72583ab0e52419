/**
 * The versions and node classes of the emulator's registry seed (issue 15),
 * drawn from the seed's nodes with their own PRNG.
 *
 * @module
 */
import { createRandom } from './random.ts';
import type { Node, StoredVersion } from './registry.ts';
import { DAY, DOWNLOAD_BASE } from './seed-catalogue.ts';

// ---------------------------------------------------------------------------
// Versions and node classes (issue 15).
//
// Seed facts others can rely on (see also SEED_FACTS.versions / SEED_FACTS.classes):
// - `nodesmith-math-expr` (latest 1.10.0) has, in creation order: 1.8.2 (active, deprecated,
//   dependencies null), 1.10.0-beta.1 (active), 1.9.0 (active), nightly (active, not semver,
//   downloadUrl ""), 1.10.0 (active, latest), 2.0.0-rc.1 (pending).
// - Every other node: up to two older releases (the oldest deprecated with dependencies null),
//   its latest_version (active), and the next patch as a pending version; shuffled
//   deterministically. Versions of banned / deleted nodes carry NodeVersionStatusBanned / Deleted.
// - Every node provides the class named after its display name without non-word characters
//   (`Face Restore` → `FaceRestore`), plus these:
//   - `TiledKSampler`: pixelforge-ultrasharp-upscale (search_ranking 54) and
//     pixelforge-tiled-diffusion (83); tiled-diffusion lists it in preempted_platform_node_names
//     and wins although its search_ranking ranks it second.
//   - `UpscaleImageTiled` (preempted by ultrasharp, as before) and `Image Upscale (Tiled+)`:
//     pixelforge-ultrasharp-upscale only.
//   - `Image Sharpen+`: pixelforge-sharpen-suite (17) and deepgrain-halftone (29), no
//     preemption: the lower search_ranking wins (pixelforge-sharpen-suite).
//   - `MathExpression` and `Math Int (+1)`: nodesmith-math-expr (two classes of one pack).
//   - `Switch | Any (Logic)`: nodesmith-logic-switch.
//   - `SAMSegment (Points+Box)`: vectorworks-segment-anything (one class of another pack).
//   - `TurboSampler`: only the banned shadowbyte-turbo-sampler, so no pack is served (404).
// ---------------------------------------------------------------------------

/** The node whose versions include prereleases and a non-semver version. */
export const PRERELEASE_NODE_ID = 'nodesmith-math-expr';

const EXTRA_CLASSES: Record<string, string[]> = {
  'pixelforge-ultrasharp-upscale': ['UpscaleImageTiled', 'Image Upscale (Tiled+)', 'TiledKSampler'],
  'pixelforge-tiled-diffusion': ['TiledKSampler'],
  'pixelforge-sharpen-suite': ['Image Sharpen+'],
  'deepgrain-halftone': ['Image Sharpen+'],
  'nodesmith-math-expr': ['MathExpression', 'Math Int (+1)'],
  'nodesmith-logic-switch': ['Switch | Any (Logic)'],
  'vectorworks-segment-anything': ['SAMSegment (Points+Box)'],
  'shadowbyte-turbo-sampler': ['TurboSampler'],
};

function releaseBelow(v: string): string | undefined {
  const [M = 0, m = 0, p = 0] = v.split('.').map(Number);
  if (p > 0) return `${M}.${m}.${p - 1}`;
  if (m > 0) return `${M}.${m - 1}.3`;
  if (M > 0) return `${M - 1}.4.0`;
  return undefined;
}

/** What the versions and classes of the seed are. */
export interface SeedVersions {
  /** Node id → its versions in creation order (not semver order); the one equal to `latest_version` shares its id. */
  versions: Record<string, StoredVersion[]>;
  /** Node id → the node class names the pack provides (its `platform_nodes`; not on the wire Node). */
  platformNodes: Record<string, string[]>;
}

/** The versions and classes of `nodes` (and `PRERELEASE_NODE_ID`'s `latest_version`), from their own PRNG. */
export function buildVersionsAndClasses(nodes: { publisherId: string; node: Node }[]): SeedVersions {
  const random = createRandom(15_150_015);
  const versions: SeedVersions['versions'] = {};
  const platformNodes: SeedVersions['platformNodes'] = {};
  for (const { publisherId, node } of nodes) {
    platformNodes[node.id] = [...new Set([(node.name ?? node.id).replace(/\W/g, ''), ...(EXTRA_CLASSES[node.id] ?? [])])];
    const latest = node.latest_version;
    if (!latest?.version) continue;
    const base = Date.parse(latest.createdAt ?? node.created_at ?? '2023-06-01T00:00:00Z');
    const statusFor = (s: string) => (latest.status === 'NodeVersionStatusActive' ? s : (latest.status ?? s));
    const make = (version: string, offsetDays: number, extra: Partial<StoredVersion> = {}): StoredVersion => ({
      ...structuredClone(latest),
      id: versionId(random),
      version,
      changelog: `Release ${version}.`,
      createdAt: new Date(base + offsetDays * DAY).toISOString(),
      downloadUrl: `${DOWNLOAD_BASE}/${publisherId}/${node.id}/${version}/node.zip`,
      status: statusFor('NodeVersionStatusActive'),
      status_reason: '',
      deprecated: false,
      ...extra,
    });
    if (node.id === PRERELEASE_NODE_ID) {
      const v1100 = make('1.10.0', -2);
      const lv = structuredClone(v1100) as NonNullable<Node['latest_version']>;
      delete lv.status_reason;
      node.latest_version = lv;
      versions[node.id] = [
        make('1.8.2', -60, { deprecated: true, dependencies: null, status_reason: 'Superseded by 1.9.0' }),
        make('1.10.0-beta.1', -30),
        make('1.9.0', -20),
        make('nightly', -10, { downloadUrl: '', changelog: 'Nightly build from main.' }),
        v1100,
        make('2.0.0-rc.1', 1, { status: statusFor('NodeVersionStatusPending'), status_reason: 'Awaiting security scan' }),
      ];
      continue;
    }
    const list: StoredVersion[] = [];
    const older1 = releaseBelow(latest.version);
    const older2 = older1 && releaseBelow(older1);
    if (older2) list.push(make(older2, -40, { deprecated: true, dependencies: null, status_reason: 'Deprecated by the publisher' }));
    if (older1) list.push(make(older1, -20));
    list.push({ ...structuredClone(latest), status_reason: '' });
    const [M, m, p] = latest.version.split('.').map(Number);
    list.push(make(`${M}.${m}.${(p ?? 0) + 1}`, 3, { status: statusFor('NodeVersionStatusPending'), status_reason: 'Awaiting security scan' }));
    // Deterministic shuffle (Fisher–Yates): the wire order is not semver order.
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [list[i], list[j]] = [list[j]!, list[i]!];
    }
    versions[node.id] = list;
  }
  return { versions, platformNodes };
}

/** A v4-UUID-shaped id from `random`. */
export function versionId(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  // Shaped like a v4 UUID so clients that validate the format accept it.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[Math.floor(random() * 4)]}${hex.slice(17, 20)}-${hex.slice(20)}`;
}
