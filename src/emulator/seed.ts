/**
 * Deterministic seed data of the emulator's registry: the same publishers,
 * nodes and numbers on every start, so tests can rely on them. Numbers come
 * from a seeded PRNG, never `Math.random`.
 *
 * @module
 */
import type { Node, NodeStatus, Publisher, PublisherStatus } from './registry.ts';
import type { StoredVersion } from './registry-versions.ts';

/**
 * mulberry32: a small seeded PRNG, good enough for test data and fault dice.
 * Returns a function yielding floats in [0, 1).
 */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The `supported_os` values the spec gives as examples, and the accelerators registries write:
// every one occurs in the seed. The SDK's own lists, which its filter hint compares with.
export { ACCELERATOR_VALUES, OS_VALUES } from '../registry/filter-hint.ts';

// Index-cycled rather than random so coverage of every value is guaranteed.
const OS_COMBOS: string[][] = [
  ['OS Independent'],
  ['POSIX :: Linux', 'Microsoft :: Windows'],
  ['POSIX :: Linux', 'MacOS', 'Microsoft :: Windows'],
  ['POSIX :: Linux :: Ubuntu'],
  ['Microsoft :: Windows :: Windows 10'],
  ['MacOS :: MacOS X', 'POSIX :: Linux'],
  ['POSIX :: Linux', 'POSIX :: Linux :: Ubuntu', 'Microsoft :: Windows :: Windows 10'],
  ['MacOS'],
  ['POSIX :: Linux'],
];
const ACCELERATOR_COMBOS: string[][] = [
  ['CUDA'],
  ['CUDA', 'ROCm'],
  ['CUDA', 'DirectML'],
  ['CPU'],
  ['CUDA', 'ROCm', 'DirectML', 'Metal'],
  ['Metal'],
  ['DirectML'],
  ['CUDA', 'Metal', 'CPU'],
];

const DEPENDENCY_POOL = [
  'torch>=2.1',
  'torchvision',
  'numpy>=1.24',
  'pillow>=10.0',
  'opencv-python-headless>=4.8',
  'scipy',
  'einops',
  'safetensors>=0.4',
  'transformers>=4.38',
  'kornia',
  'timm',
  'onnxruntime-gpu',
  'imageio-ffmpeg',
  'scikit-image',
];

interface PublisherSeed {
  id: string;
  name: string;
  description: string;
  status: PublisherStatus;
  members: [name: string, role: string][];
  /** [slug, display name, description, tags, status?, status_detail?] */
  nodes: [string, string, string, string[], NodeStatus?, string?][];
}

const CATALOGUE: PublisherSeed[] = [
  {
    id: 'pixelforge',
    name: 'PixelForge Studio',
    description: 'Image upscaling and restoration nodes.',
    status: 'PublisherStatusActive',
    members: [
      ['Ada Moreau', 'owner'],
      ['Kenji Sato', 'maintainer'],
    ],
    nodes: [
      ['ultrasharp-upscale', 'UltraSharp Upscale', 'Tiled 4x and 8x upscaling with seam-free blending for large images.', ['upscale', 'image']],
      ['face-restore', 'Face Restore', 'Restores faces in generated images with GFPGAN and CodeFormer backends.', ['face', 'restoration']],
      ['denoise-pro', 'Denoise Pro', 'Removes sensor noise and diffusion speckle while keeping fine texture.', ['denoise', 'image']],
      ['tiled-diffusion', 'Tiled Diffusion', 'Region-wise sampling that renders images larger than VRAM allows.', ['sampling', 'upscale']],
      ['jpeg-artifact-removal', 'JPEG Artifact Removal', 'Cleans blocking and ringing artifacts from compressed inputs.', ['restoration', 'image']],
      ['batch-resize', 'Batch Resize', 'Resizes image batches by side, megapixels or multiple of 64.', ['utility', 'image']],
      ['sharpen-suite', 'Sharpen Suite', 'Unsharp mask, high-pass and adaptive sharpening in one node.', ['postprocess', 'image']],
      ['legacy-upscaler', 'Legacy Upscaler', 'Old ESRGAN wrapper, superseded by UltraSharp Upscale.', ['upscale'], 'NodeStatusDeleted', 'Removed by publisher'],
    ],
  },
  {
    id: 'lumen-labs',
    name: 'Lumen Labs',
    description: 'Lighting, relighting and colour tools.',
    status: 'PublisherStatusActive',
    members: [
      ['Priya Raman', 'owner'],
      ['Tomás Ferreira', 'member'],
      ['Lena Fischer', 'maintainer'],
    ],
    nodes: [
      ['relight', 'IC Relight', 'Relights a subject from a text prompt or a reference lightmap.', ['lighting', 'relight']],
      ['color-grade', 'Color Grade', 'Applies .cube LUTs and lift/gamma/gain colour grading.', ['color', 'postprocess']],
      ['hdr-merge', 'HDR Merge', 'Merges bracketed exposures into a tone-mapped HDR image.', ['hdr', 'color']],
      ['depth-lighting', 'Depth Lighting', 'Adds point and area lights using an estimated depth map.', ['lighting', 'depth']],
      ['shadow-catcher', 'Shadow Catcher', 'Extracts cast shadows into a separate compositing layer.', ['lighting', 'compositing']],
      ['white-balance', 'White Balance', 'Automatic and picker-based white balance correction.', ['color']],
      ['lightmap-generator', 'Lightmap Generator', 'Paints lightmaps from gradients for relighting workflows.', ['lighting', 'relight']],
      ['film-emulation', 'Film Emulation', 'Emulates classic film stocks with grain and halation.', ['color', 'film']],
    ],
  },
  {
    id: 'nodesmith',
    name: 'Nodesmith',
    description: 'Utility, math and logic nodes for workflow builders.',
    status: 'PublisherStatusActive',
    members: [['Marta Kowalska', 'owner']],
    nodes: [
      ['math-expr', 'Math Expression', 'Evaluates arithmetic expressions over ints, floats and image sizes.', ['math', 'utility']],
      ['logic-switch', 'Logic Switch', 'If/else and any-switch routing for conditional workflows.', ['logic', 'utility']],
      ['string-tools', 'String Tools', 'Concatenate, replace, split and format text values.', ['text', 'utility']],
      ['list-utils', 'List Utilities', 'Builds, slices and zips lists for batch processing.', ['utility', 'batch']],
      ['seed-manager', 'Seed Manager', 'Global seed control with increment, randomise and lock modes.', ['sampling', 'utility']],
      ['image-compare', 'Image Compare', 'Side-by-side and slider comparison previews.', ['preview', 'image']],
      ['workflow-notes', 'Workflow Notes', 'Markdown notes and group labels inside workflows.', ['ui', 'utility']],
      ['legacy-sampler', 'Legacy Sampler', 'Deprecated sampler kept for old workflows.', ['sampling'], 'NodeStatusDeleted', 'Deprecated and removed'],
    ],
  },
  {
    id: 'vectorworks',
    name: 'VectorWorks',
    description: 'Segmentation, masks and vector output.',
    status: 'PublisherStatusActive',
    members: [
      ['Samuel Okafor', 'owner'],
      ['Yuki Tanaka', 'member'],
    ],
    nodes: [
      ['svg-export', 'SVG Export', 'Vectorises images and saves them as layered SVG files.', ['vector', 'export']],
      ['segment-anything', 'Segment Anything', 'Point, box and text prompted segmentation masks.', ['segmentation', 'mask']],
      ['mask-tools', 'Mask Tools', 'Grow, shrink, feather and combine masks.', ['mask', 'utility']],
      ['outline-trace', 'Outline Trace', 'Traces line art into clean vector outlines.', ['vector', 'lineart']],
      ['background-remove', 'Background Remove', 'One-click background removal with alpha matting.', ['mask', 'segmentation']],
      ['inpaint-helper', 'Inpaint Helper', 'Crops, pads and stitches masked regions for inpainting.', ['inpaint', 'mask']],
      ['shape-prompts', 'Shape Prompts', 'Draws geometric masks from simple shape descriptions.', ['mask', 'vector']],
      ['qr-code', 'QR Code', 'Generates scannable QR codes for ControlNet artwork.', ['controlnet', 'utility']],
    ],
  },
  {
    id: 'kinetic-ai',
    name: 'Kinetic AI',
    description: 'Video, animation and motion nodes.',
    status: 'PublisherStatusActive',
    members: [
      ['Diego Alvarez', 'owner'],
      ['Hannah Berg', 'maintainer'],
    ],
    nodes: [
      ['frame-interpolation', 'Frame Interpolation', 'RIFE and FILM frame interpolation for smooth video.', ['video', 'animation']],
      ['video-loader', 'Video Loader', 'Loads video files and image sequences as frame batches.', ['video', 'io']],
      ['animate-diff', 'AnimateDiff Evolved', 'Motion modules and context scheduling for AnimateDiff.', ['animation', 'sampling']],
      ['optical-flow', 'Optical Flow', 'Estimates optical flow and warps frames along it.', ['video', 'motion']],
      ['pose-estimation', 'Pose Estimation', 'OpenPose and DWPose keypoints for ControlNet.', ['controlnet', 'pose']],
      ['gif-export', 'GIF Export', 'Saves frame batches as GIF, WebP or MP4.', ['video', 'export']],
      ['camera-motion', 'Camera Motion', 'Pan, zoom and orbit camera paths for animations.', ['animation', 'motion']],
      ['lip-sync', 'Lip Sync', 'Audio-driven mouth animation.', ['video', 'audio'], 'NodeStatusBanned', 'Redistributes model weights without a licence'],
    ],
  },
  {
    id: 'opencanvas',
    name: 'OpenCanvas Collective',
    description: 'Community prompt and model-loading tools.',
    status: 'PublisherStatusActive',
    members: [
      ['Noor Haddad', 'owner'],
      ['Ivan Petrov', 'member'],
      ['Chloé Martin', 'member'],
    ],
    nodes: [
      ['prompt-styler', 'Prompt Styler', 'Applies curated style templates to positive and negative prompts.', ['prompt', 'text']],
      ['wildcards', 'Wildcards', 'Expands __wildcard__ files and {a|b} choices in prompts.', ['prompt', 'text']],
      ['lora-loader', 'LoRA Stack Loader', 'Loads and weights several LoRAs in one node.', ['loader', 'lora']],
      ['clip-interrogator', 'CLIP Interrogator', 'Describes an image as a prompt using BLIP and CLIP.', ['prompt', 'captioning']],
      ['prompt-scheduler', 'Prompt Scheduler', 'Changes prompts over sampling steps or animation frames.', ['prompt', 'animation']],
      ['translate-prompt', 'Translate Prompt', 'Translates prompts written in other languages to English.', ['prompt', 'text', 'i18n']],
      ['aspect-ratio', 'Aspect Ratio Presets', 'Latent sizes from common aspect ratios and model presets.', ['utility', 'latent']],
      ['gallery-saver', 'Gallery Saver', 'Saves images with metadata sidecars into dated folders.', ['io', 'export']],
    ],
  },
  {
    id: 'deepgrain',
    name: 'DeepGrain',
    description: 'Texture, material and depth nodes.',
    status: 'PublisherStatusActive',
    members: [
      ['Olu Adeyemi', 'owner'],
      ['Sofia Rossi', 'maintainer'],
    ],
    nodes: [
      ['film-grain', 'Film Grain', 'Physically based film grain with per-channel control.', ['film', 'postprocess']],
      ['texture-synth', 'Texture Synth', 'Synthesises seamless tileable textures from a sample.', ['texture', '3d']],
      ['normal-map', 'Normal Map', 'Generates normal maps from images or depth.', ['texture', '3d']],
      ['depth-anything', 'Depth Anything', 'Monocular depth estimation with Depth Anything V2.', ['depth', 'controlnet']],
      ['mesh-preview', 'Mesh Preview', 'Interactive preview of OBJ and GLB meshes.', ['3d', 'preview']],
      ['pbr-materials', 'PBR Materials', 'Builds albedo, roughness and metallic maps.', ['texture', '3d']],
      ['noise-patterns', 'Noise Patterns', 'Perlin, Worley and fractal noise generators.', ['texture', 'latent']],
      ['halftone', 'Halftone', 'Halftone and dithering print effects.', ['postprocess', 'image']],
    ],
  },
  {
    id: 'shadowbyte',
    name: 'ShadowByte',
    description: 'Banned publisher kept for moderation history.',
    status: 'PublisherStatusBanned',
    members: [['Rex Nolan', 'owner']],
    nodes: [
      ['free-gpu-credits', 'Free GPU Credits', 'Claims to unlock free cloud GPU time.', ['sampling'], 'NodeStatusBanned', 'Bundled a cryptocurrency miner'],
      ['turbo-sampler', 'Turbo Sampler', 'Claims 10x faster sampling.', ['sampling', 'speed'], 'NodeStatusBanned', 'Exfiltrated API keys'],
      ['prompt-booster', 'Prompt Booster', 'Adds quality keywords to prompts.', ['prompt'], 'NodeStatusBanned', 'Publisher banned'],
      ['auto-updater', 'Auto Updater', 'Self-updating node pack.', ['utility'], 'NodeStatusDeleted', 'Removed by moderators'],
      ['image-saver-plus', 'Image Saver Plus', 'Saves images with extra metadata.', ['io'], 'NodeStatusBanned', 'Publisher banned'],
      ['style-pack', 'Style Pack', 'Collection of prompt styles.', ['prompt', 'style'], 'NodeStatusBanned', 'Publisher banned'],
    ],
  },
  // The publisher of the README's examples (`createNode('acme', …)`, `listPublisherNodes('acme')`,
  // `deletePublisher('acme')`), with the upscalers its search finds on Linux. Last, so every node
  // above keeps the numbers the shared PRNG gave it.
  {
    id: 'acme',
    name: 'Acme Imaging',
    description: 'Model upscalers for production image and video pipelines.',
    status: 'PublisherStatusActive',
    members: [
      ['Grace Liu', 'owner'],
      ['Felix Novak', 'maintainer'],
    ],
    nodes: [
      ['esrgan-upscale', 'ESRGAN Upscale', 'Real-ESRGAN, SwinIR and HAT model upscaling at 2x and 4x for photos and anime.', ['upscale', 'image']],
      ['hires-fix', 'Hires Fix Latent Upscale', 'Upscales latents before a second sampling pass, with model-based and bislerp methods.', ['upscale', 'latent']],
      ['video-upscale', 'Video Upscale', 'Frame-consistent upscaling of video batches with temporal smoothing.', ['upscale', 'video']],
    ],
  },
];

/** Nodes whose platforms are chosen, not cycled: the README's `upscale` + `POSIX :: Linux` search finds the first two. */
const PLATFORMS: Record<string, [os: string[], accelerators: string[]]> = {
  'acme-esrgan-upscale': [['POSIX :: Linux', 'Microsoft :: Windows'], ['CUDA', 'ROCm', 'DirectML']],
  'acme-hires-fix': [['POSIX :: Linux', 'MacOS'], ['CUDA', 'Metal']],
  'acme-video-upscale': [['POSIX :: Linux :: Ubuntu'], ['CUDA']],
};

/** What the seed holds: publishers, and nodes with the id of their publisher. */
export interface SeedData {
  publishers: Publisher[];
  nodes: { publisherId: string; node: Node }[];
  /** Node id → its versions in creation order (not semver order); the one equal to `latest_version` shares its id. */
  versions: Record<string, StoredVersion[]>;
  /** Node id → the node class names the pack provides (its `platform_nodes`; not on the wire Node). */
  platformNodes: Record<string, string[]>;
}

const DAY = 86_400_000;
const EPOCH = Date.UTC(2023, 5, 1); // 2023-06-01

/** Where seed `downloadUrl`s point; nothing is served there. */
export const DOWNLOAD_BASE = 'https://storage.platformui.example/registry';

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

function buildVersionsAndClasses(nodes: SeedData['nodes']): Pick<SeedData, 'versions' | 'platformNodes'> {
  const random = createRandom(15_150_015);
  const versions: SeedData['versions'] = {};
  const platformNodes: SeedData['platformNodes'] = {};
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

function versionId(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  // Shaped like a v4 UUID so clients that validate the format accept it.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[Math.floor(random() * 4)]}${hex.slice(17, 20)}-${hex.slice(20)}`;
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
