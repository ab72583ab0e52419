/**
 * What the emulator's registry seed is written from: its publishers, their
 * members and nodes, and the platform lists the nodes cycle through. Numbers
 * (downloads, dates, rankings) are drawn from these by `buildSeed`.
 *
 * @module
 */
import type { NodeStatus, PublisherStatus } from './registry.ts';

/** One day, ms. */
export const DAY = 86_400_000;

/** Where seed `downloadUrl`s point; nothing is served there. */
export const DOWNLOAD_BASE = 'https://storage.platformui.example/registry';

// Index-cycled rather than random so coverage of every value is guaranteed.
/** `supported_os` lists, cycled through the nodes. */
export const OS_COMBOS: string[][] = [
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
/** `supported_accelerators` lists, cycled through the nodes. */
export const ACCELERATOR_COMBOS: string[][] = [
  ['CUDA'],
  ['CUDA', 'ROCm'],
  ['CUDA', 'DirectML'],
  ['CPU'],
  ['CUDA', 'ROCm', 'DirectML', 'Metal'],
  ['Metal'],
  ['DirectML'],
  ['CUDA', 'Metal', 'CPU'],
];

/** Python requirements the seed's versions draw from. */
export const DEPENDENCY_POOL = [
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

/** One publisher of the catalogue and its nodes, as written. */
export interface PublisherSeed {
  id: string;
  name: string;
  description: string;
  status: PublisherStatus;
  members: [name: string, role: string][];
  /** [slug, display name, description, tags, status?, status_detail?] */
  nodes: [string, string, string, string[], NodeStatus?, string?][];
}

/** The seed's publishers and their nodes. */
export const CATALOGUE: PublisherSeed[] = [
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
export const PLATFORMS: Record<string, [os: string[], accelerators: string[]]> = {
  'acme-esrgan-upscale': [['POSIX :: Linux', 'Microsoft :: Windows'], ['CUDA', 'ROCm', 'DirectML']],
  'acme-hires-fix': [['POSIX :: Linux', 'MacOS'], ['CUDA', 'Metal']],
  'acme-video-upscale': [['POSIX :: Linux :: Ubuntu'], ['CUDA']],
};
