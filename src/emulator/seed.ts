/**
 * Deterministic seed data of the emulator's registry: the same publishers,
 * nodes and numbers on every start, so tests can rely on them. Numbers come
 * from a seeded PRNG, never `Math.random`.
 *
 * @module
 */
import { createRandom } from './random.ts';
import type { Node, NodeStatus, Publisher, StoredVersion } from './registry.ts';
import { ACCELERATOR_COMBOS, CATALOGUE, DAY, DEPENDENCY_POOL, DOWNLOAD_BASE, OS_COMBOS, PLATFORMS } from './seed-catalogue.ts';
import { buildVersionsAndClasses, PRERELEASE_NODE_ID, versionId } from './seed-versions.ts';

// Where they were first defined, importable from here as they always were.
export { createRandom } from './random.ts';
export { DOWNLOAD_BASE } from './seed-catalogue.ts';
export { PRERELEASE_NODE_ID } from './seed-versions.ts';

// The `supported_os` values the spec gives as examples, and the accelerators registries write:
// every one occurs in the seed. The SDK's own lists, which its filter hint compares with.
export { ACCELERATOR_VALUES, OS_VALUES } from '../registry/filter-hint.ts';

/** What the seed holds: publishers, and nodes with the id of their publisher. */
export interface SeedData {
  publishers: Publisher[];
  nodes: { publisherId: string; node: Node }[];
  /** Node id → its versions in creation order (not semver order); the one equal to `latest_version` shares its id. */
  versions: Record<string, StoredVersion[]>;
  /** Node id → the node class names the pack provides (its `platform_nodes`; not on the wire Node). */
  platformNodes: Record<string, string[]>;
}

const EPOCH = Date.UTC(2023, 5, 1); // 2023-06-01

/** Builds the seed. Pure: every call returns fresh, equal objects. */
export function buildSeed(): SeedData {
  const random = createRandom(20_231_106);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const iso = (ms: number) => new Date(ms).toISOString();
  const publishers: Publisher[] = [];
  const nodes: SeedData['nodes'] = [];
  let index = 0;

  CATALOGUE.forEach((p, pi) => {
    const publisherCreated = EPOCH + pi * 17 * DAY;
    publishers.push({
      id: p.id,
      name: p.name,
      description: p.description,
      logo: `https://avatars.githubusercontent.example/${p.id}.png`,
      members: p.members.map(([name, role], mi) => ({
        id: `member-${p.id}-${mi + 1}`,
        role,
        user: {
          id: `user-${p.id}-${mi + 1}`,
          name,
          email: `${name.toLowerCase().normalize('NFD').replace(/[^a-z ]/g, '').replace(/ /g, '.')}@${p.id}.example`,
        },
      })),
      source_code_repo: `https://github.com/${p.id}`,
      status: p.status,
      support: `https://github.com/${p.id}/support/issues`,
      website: `https://${p.id}.example`,
      createdAt: iso(publisherCreated),
    });

    for (const [slug, name, description, tags, status, statusDetail] of p.nodes) {
      const id = `${p.id}-${slug}`.replace(/^kinetic-ai-/, 'kinetic-');
      const created = publisherCreated + int(1, 300) * DAY + int(0, 86_399) * 1000;
      const versionCreated = created + int(0, 120) * DAY + int(0, 86_399) * 1000;
      const version = `${int(0, 2)}.${int(0, 12)}.${int(0, 20)}`;
      const [os, accelerators] = PLATFORMS[id] ?? [OS_COMBOS[index % OS_COMBOS.length] ?? ['OS Independent'], ACCELERATOR_COMBOS[(index * 5 + pi) % ACCELERATOR_COMBOS.length] ?? ['CPU']];
      const deps = [...new Set(Array.from({ length: int(1, 4) }, () => DEPENDENCY_POOL[int(0, DEPENDENCY_POOL.length - 1)] ?? 'numpy'))];
      const repo = `https://github.com/${p.id}/${slug}`;
      const node: Node = {
        id,
        name,
        author: p.members[0]?.[0] ?? p.name,
        description,
        banner_url: `https://storage.platformui.example/banners/${id}.png`,
        icon: `https://storage.platformui.example/icons/${id}.svg`,
        created_at: iso(created),
        downloads: Math.floor(10 ** (1 + random() * 5)),
        github_stars: Math.floor(10 ** (random() * 4)),
        license: index % 5 === 0 ? 'LICENSE.txt' : 'LICENSE',
        rating: Math.round((2.5 + random() * 2.5) * 10) / 10,
        repository: repo,
        search_ranking: int(1, 100),
        status: status ?? 'NodeStatusActive',
        supported_accelerators: accelerators,
        supported_platformui_frontend_version: '>=1.2.0',
        supported_platformui_version: index % 3 === 0 ? '>=0.3.0' : '>=0.2.0',
        supported_os: os,
        tags,
        latest_version: {
          id: versionId(random),
          node_id: id,
          version,
          changelog: `Release ${version}: fixes and improvements.`,
          platform_node_extract_status: 'success',
          createdAt: iso(versionCreated),
          dependencies: deps,
          deprecated: false,
          downloadUrl: `${DOWNLOAD_BASE}/${p.id}/${id}/${version}/node.zip`,
          status: status === 'NodeStatusBanned' ? 'NodeVersionStatusBanned' : status === 'NodeStatusDeleted' ? 'NodeVersionStatusDeleted' : 'NodeVersionStatusActive',
          supported_accelerators: accelerators,
          supported_platformui_frontend_version: '>=1.2.0',
          supported_platformui_version: '>=0.2.0',
          supported_os: os,
          tags,
        },
      };
      // A few optional fields appear only on some nodes, as in a real registry.
      if (index % 4 === 0) node.category = tags[0] ?? 'utility';
      if (statusDetail) node.status_detail = statusDetail;
      if (status === 'NodeStatusBanned') node.tags_admin = ['security:flagged'];
      if (slug === 'translate-prompt') {
        node.translations = {
          zh: { name: '翻译提示词', description: '将其他语言的提示词翻译为英文。' },
          fr: { name: 'Traduire le prompt', description: 'Traduit les prompts vers l’anglais.' },
        };
      }
      if (slug === 'ultrasharp-upscale') node.preempted_platform_node_names = ['UpscaleImageTiled', 'UltraSharpUpscale'];
      if (slug === 'tiled-diffusion') node.preempted_platform_node_names = ['TiledKSampler'];
      nodes.push({ publisherId: p.id, node });
      index++;
    }
  });
  // Versions and classes come after, from their own PRNG, so the nodes above stay as they were.
  const { versions, platformNodes } = buildVersionsAndClasses(nodes);
  return { publishers, nodes, versions, platformNodes };
}

/** Facts about the seed that tests can rely on. Computed from the data, so always in step with it. */
export const SEED_FACTS = (() => {
  const { publishers, nodes } = buildSeed();
  const byStatus = (s: NodeStatus) => nodes.filter((n) => n.node.status === s).map((n) => n.node.id);
  const active = byStatus('NodeStatusActive');
  const banned = byStatus('NodeStatusBanned');
  const deleted = byStatus('NodeStatusDeleted');
  return {
    publisherIds: publishers.map((p) => p.id),
    activePublisherIds: publishers.filter((p) => p.status === 'PublisherStatusActive').map((p) => p.id),
    bannedPublisherId: 'shadowbyte',
    bannedNodeId: 'shadowbyte-free-gpu-credits',
    deletedNodeId: 'pixelforge-legacy-upscaler',
    nodeCount: nodes.length,
    activeNodeIds: active,
    bannedNodeIds: banned,
    deletedNodeIds: deleted,
    /** Nodes `GET /nodes/search` lists by default. */
    searchableCount: active.length,
    /** Nodes listed with `include_banned=true`. */
    searchableWithBannedCount: active.length + banned.length,
    /** Node with prerelease versions and the non-semver `nightly` (see the comment above `PRERELEASE_NODE_ID`). */
    prereleaseNodeId: PRERELEASE_NODE_ID,
    /** Class names for ranking and workflow tests, with the pack each resolves to (`null`: 404). */
    classes: {
      preempted: { className: 'TiledKSampler', winner: 'pixelforge-tiled-diffusion', loser: 'pixelforge-ultrasharp-upscale' },
      byRanking: { className: 'Image Sharpen+', winner: 'pixelforge-sharpen-suite', loser: 'deepgrain-halftone' },
      special: { 'Image Upscale (Tiled+)': 'pixelforge-ultrasharp-upscale', 'Switch | Any (Logic)': 'nodesmith-logic-switch' },
      workflow: { 'MathExpression': 'nodesmith-math-expr', 'Math Int (+1)': 'nodesmith-math-expr', 'SAMSegment (Points+Box)': 'vectorworks-segment-anything' },
      bannedOnly: 'TurboSampler',
    },
    /**
     * What the README's registry examples meet: their publisher (`createNode('acme', …)`,
     * `listPublisherNodes('acme')`, `deletePublisher('acme')`), its nodes, and the nodes of
     * `searchNodes({ search: 'upscale', supported_os: 'POSIX :: Linux' })`, best ranked first.
     */
    readme: {
      publisherId: 'acme',
      publisherNodeIds: nodes.filter((n) => n.publisherId === 'acme').map((n) => n.node.id),
      linuxUpscalerIds: nodes
        .filter(({ node: n }) => n.status === 'NodeStatusActive' && [n.id, n.name, n.description].join('\n').toLowerCase().includes('upscale') && n.supported_os?.includes('POSIX :: Linux'))
        .sort((a, b) => (b.node.search_ranking ?? 0) - (a.node.search_ranking ?? 0))
        .map((n) => n.node.id),
    },
    /** Personal access tokens accepted by the publish route: `pat-<publisherId>` each, plus `EMULATOR_PAT` for all. */
    personalAccessTokens: publishers.map((p) => `pat-${p.id}`),
  };
})();
