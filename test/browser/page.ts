// The browser test page (bundled by test/browser/run.mjs with esbuild for the
// browser, then opened in Chromium). It imports the SDK by its package name,
// as a user's app does: the bundler resolves the name through package.json
// "exports" to the built browser entry (dist/index.browser.js), so this exercises the
// published artefact and its exports map, not the TypeScript sources.
// (The type-checker maps the name to src/ via tsconfig `paths`; run.mjs
// makes esbuild ignore that, so the bundle uses dist/.)
//
// The page runs a list of named checks, one after the other, against the
// emulator whose URL comes in the query string (`?emulator=http://...`); the
// emulator is on another origin, so every call is a real CORS request.
// Each check gets a <section data-check="name" data-status="running|pass|fail">
// with a one-line `.detail` and an `.out` element it renders into; the runner
// reads those. When all are done, <body data-status="done">.
//
// To add a check (proxy relight, Blob upload, a workflow run with a preview
// image, ...): append to `checks`, render what it saw into `out` (data-*
// attributes are the easiest to assert on), return a short summary, throw on
// failure; then, if the runner should verify the rendered values, add an
// entry to `expectations` in run.mjs.
import { CloudClient, DownloadError, NotFoundError, PlatformUIError, ProxyClient, RegistryClient, SubmissionError, Workflow } from '@platformui/sdk';

// The emulator's default credentials (see @platformui/sdk/emulator).
const TOKEN = 'emulator-token';
const API_KEY = 'emulator-key';
// A 1×1 PNG.
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));

interface Ctx {
  /** The emulator's base URL (another origin than this page). */
  baseUrl: string;
  /** Where the check renders what it saw. */
  out: HTMLElement;
}

interface Check {
  name: string;
  /** Resolves to a one-line summary; throws on failure. */
  run(ctx: Ctx): Promise<string>;
}

/** A workflow saved in the editor: the uploaded image inverted and saved, and a note the server never sees. */
const savedInEditor = (image: string) => ({
  version: 0.4,
  nodes: [
    { id: 1, type: 'LoadImage', mode: 0, inputs: [], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }], widgets_values: [image, 'image'] },
    { id: 2, type: 'ImageInvert', mode: 0, inputs: [{ name: 'image', type: 'IMAGE', link: 1 }], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [2] }] },
    { id: 3, type: 'SaveImage', title: 'Keep', mode: 0, inputs: [{ name: 'images', type: 'IMAGE', link: 2 }], outputs: [], widgets_values: ['browser-saved'] },
    { id: 4, type: 'Note', mode: 0, inputs: [], outputs: [], widgets_values: ['a note the server never sees'] },
  ],
  links: [
    [1, 1, 0, 2, 0, 'IMAGE'],
    [2, 2, 0, 3, 0, 'IMAGE'],
  ],
  extra: {},
});

/** The scripts the page fetched since `since` resource entries (a chunk loaded on first use shows here). */
const scriptsSince = (since: number) =>
  performance
    .getEntriesByType('resource')
    .slice(since)
    .map((e) => new URL(e.name).pathname)
    .filter((p) => p.endsWith('.js'));

const checks: Check[] = [
  {
    name: 'registry.searchNodes',
    async run({ baseUrl, out }) {
      const page = await new RegistryClient({ baseUrl }).searchNodes({ limit: 2 });
      const list = document.createElement('ul');
      for (const node of page.nodes) {
        const li = document.createElement('li');
        li.textContent = node.name ?? node.id ?? '';
        list.append(li);
      }
      out.dataset.total = String(page.total);
      out.append(list);
      if (page.nodes.length < 1) throw new Error(`no nodes (total ${page.total})`);
      return `${page.nodes.length} nodes shown, total ${page.total}`;
    },
  },
  {
    name: 'proxy.relightImage',
    async run({ baseUrl, out }) {
      // Bytes become base64 in the browser build, without Buffer.
      const task = await new ProxyClient({ baseUrl, token: TOKEN }).relightImage({ image: PNG, style: 'smooth', light_transfer_strength: 40 });
      out.dataset.taskId = task.task_id;
      out.dataset.status = task.status;
      out.textContent = `${task.task_id} ${task.status}`;
      return `task ${task.task_id} ${task.status}`;
    },
  },
  {
    name: 'cloud.uploadImage(Blob)',
    async run({ baseUrl, out }) {
      const res = await new CloudClient({ baseUrl, apiKey: API_KEY }).uploadImage(new Blob([PNG], { type: 'image/png' }), { filename: 'pixel.png' });
      out.dataset.name = res.name;
      out.textContent = res.name;
      return `uploaded as ${res.name}`;
    },
  },
  {
    // The requests about a job (status, record, stop, queue, interrupt) are a chunk of their own, loaded on the first
    // of them (before any run: a run's follower may read a record). Its errors are its own copies of the classes, which
    // must still be the root's by instanceof.
    name: 'cloud.getJob of an unknown job: a NotFoundError from the routes chunk',
    async run({ baseUrl, out }) {
      const cloud = new CloudClient({ baseUrl, apiKey: API_KEY });
      const loaded = performance.getEntriesByType('resource').length;
      const err = await cloud.getJob('00000000-0000-4000-8000-000000000000').then(() => undefined, (e: unknown) => e);
      if (!(err instanceof NotFoundError) || !(err instanceof PlatformUIError)) throw new Error(`expected a NotFoundError, got ${String(err)}`);
      out.dataset.scripts = scriptsSince(loaded).join(',');
      if (!out.dataset.scripts.includes('routes.browser')) throw new Error(`getJob() loaded no routes chunk: ${out.dataset.scripts || 'none'}`);
      const queue = await cloud.getQueue();
      if (!Array.isArray(queue.queue_running)) throw new Error(`getQueue() answered ${JSON.stringify(queue)}`);
      return `${err.name} (${err.status}); scripts loaded by getJob(): ${out.dataset.scripts}; then getQueue(): ${queue.queue_running.length} running`;
    },
  },
  {
    name: 'cloud.run with a preview',
    async run({ baseUrl, out }) {
      const cloud = new CloudClient({ baseUrl, apiKey: API_KEY });
      try {
        // An app opens its socket once, up front; run() never waits for it, but then hears the whole job.
        const ready = cloud.connect().ready();
        const { name } = await cloud.uploadImage(new Blob([PNG], { type: 'image/png' }), { filename: 'in.png' });
        await ready;
        const shown: Array<Promise<void>> = [];
        const result = await cloud.run(
          {
            '1': { class_type: 'LoadImage', inputs: { image: name } },
            '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
            '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'browser' } },
          },
          {
            timeout: 15_000,
            onPreview: (frame) => {
              // The frame's bytes are a view into the socket's ArrayBuffer: shown as is.
              const img = document.createElement('img');
              img.className = 'preview';
              shown.push(new Promise((resolve, reject) => ((img.onload = () => resolve()), (img.onerror = () => reject(new Error('preview did not decode'))))));
              img.src = URL.createObjectURL(new Blob([frame.image], { type: frame.mime ?? 'image/png' }));
              out.append(img);
            },
          },
        );
        await Promise.all(shown);
        if (shown.length === 0) throw new Error('no preview frame arrived');
        out.dataset.promptId = result.promptId;
        out.dataset.files = result.files.map((f) => f.filename).join(',');
        return `job ${result.promptId}: ${shown.length} preview(s), ${result.files.length} file(s)`;
      } finally {
        cloud.close();
      }
    },
  },
  {
    // The submission is a chunk of its own, loaded on the first submit(): what it throws must be the root's classes.
    name: 'cloud.submit refused: a SubmissionError',
    async run({ baseUrl, out }) {
      const cloud = new CloudClient({ baseUrl, apiKey: API_KEY });
      try {
        await cloud.submit({ '1': { class_type: 'NoSuchNodeClass', inputs: {} } });
        throw new Error('the server took a workflow of an unknown class');
      } catch (err) {
        if (!(err instanceof SubmissionError)) throw new Error(`expected a SubmissionError, got ${String(err)}`);
        return `SubmissionError: ${err.message.slice(0, 80)}`;
      } finally {
        cloud.close();
      }
    },
  },
  {
    // Downloads are a chunk of their own, loaded on the first download(). A browser hides a manual redirect, so the
    // cloud's signed one cannot be read without forwarding the key: the SDK refuses with a DownloadError made by that
    // chunk's own copy of the class, which must still be the root's by instanceof.
    name: 'cloud.download in a browser: a DownloadError from its own chunk',
    async run({ baseUrl, out }) {
      const cloud = new CloudClient({ baseUrl, apiKey: API_KEY });
      try {
        const { name } = await cloud.uploadImage(new Blob([PNG], { type: 'image/png' }), { filename: 'view.png' });
        const loaded = performance.getEntriesByType('resource').length;
        const err = await cloud.download({ filename: name, subfolder: '', type: 'input' }).then(() => undefined, (e: unknown) => e);
        if (!(err instanceof DownloadError) || err.reason !== 'opaque_redirect') throw new Error(`expected a DownloadError (opaque_redirect), got ${String(err)}`);
        out.dataset.scripts = scriptsSince(loaded).join(',');
        if (!out.dataset.scripts.includes('downloads.browser')) throw new Error(`download() loaded no downloads chunk: ${out.dataset.scripts || 'none'}`);
        return `${err.name} (${err.reason}); scripts loaded by download(): ${out.dataset.scripts}`;
      } finally {
        cloud.close();
      }
    },
  },
  {
    // The converter is a chunk of its own, loaded on first use: Workflow.fromEditor() is synchronous, so before it is
    // loaded it says how to load it; a CloudClient's getObjectInfo() loads it (run.mjs checks it was not in page.js
    // and that the page fetched it during getObjectInfo()).
    name: 'Workflow.fromEditor after getObjectInfo()',
    async run({ baseUrl, out }) {
      const cloud = new CloudClient({ baseUrl, apiKey: API_KEY });
      try {
        const { name } = await cloud.uploadImage(new Blob([PNG], { type: 'image/png' }), { filename: 'saved.png' });
        let before: unknown;
        try {
          Workflow.fromEditor(savedInEditor(name), {});
        } catch (err) {
          before = err;
        }
        if (!(before instanceof PlatformUIError) || !before.message.includes('await Workflow.loadEditor()')) throw new Error(`before the converter loaded, fromEditor() threw ${String(before)}`);
        const loaded = performance.getEntriesByType('resource').length;
        const info = await cloud.getObjectInfo();
        out.dataset.scripts = scriptsSince(loaded).join(',');
        const wf = Workflow.fromEditor(savedInEditor(name), info);
        out.dataset.classes = Object.values(wf.toJSON()).map((n) => n.class_type).join(',');
        return `converted to ${out.dataset.classes}; scripts loaded by getObjectInfo(): ${out.dataset.scripts || 'none'}`;
      } finally {
        cloud.close();
      }
    },
  },
  {
    // A CloudClient converts an editor file on its own (the converter was loaded by the check above: run.mjs checks
    // the server ran the converted workflow).
    name: 'cloud.run of a workflow saved in the editor',
    async run({ baseUrl, out }) {
      const cloud = new CloudClient({ baseUrl, apiKey: API_KEY });
      try {
        const { name } = await cloud.uploadImage(new Blob([PNG], { type: 'image/png' }), { filename: 'saved.png' });
        const saved = savedInEditor(name);
        const result = await cloud.run(saved, { timeout: 15_000 });
        out.dataset.promptId = result.promptId;
        if (!result.files.some((f) => f.filename.startsWith('browser-saved'))) throw new Error(`no output file: ${JSON.stringify(result.files)}`);
        return `job ${result.promptId}: ${result.files.length} file(s)`;
      } finally {
        cloud.close();
      }
    },
  },
  {
    name: 'PLATFORMUI_LOG is not read in a browser',
    async run({ baseUrl, out }) {
      // A bundler's `process` shim, as some apps carry one, with a debug switch in it:
      // the browser build must not take configuration from it (DESIGN §3).
      const g = globalThis as { process?: unknown };
      const before = g.process;
      g.process = { versions: { node: '22.0.0' }, env: { PLATFORMUI_LOG: 'debug' } };
      try {
        const lines: Record<string, number> = { error: 0, warn: 0, info: 0, debug: 0 };
        const logger = { error: () => void lines.error!++, warn: () => void lines.warn!++, info: () => void lines.info!++, debug: () => void lines.debug!++ };
        await new RegistryClient({ baseUrl, logger }).searchNodes({ limit: 1 });
        const shimmed = lines.debug!;
        // The control: the option itself works in the browser build.
        await new RegistryClient({ baseUrl, logger, logLevel: 'debug' }).searchNodes({ limit: 1 });
        out.dataset.envDebugLines = String(shimmed);
        out.dataset.optionDebugLines = String(lines.debug! - shimmed);
        if (shimmed !== 0) throw new Error(`PLATFORMUI_LOG was read: ${shimmed} debug line(s)`);
        if (lines.debug === 0) throw new Error("logLevel: 'debug' logged nothing");
        return `0 lines from PLATFORMUI_LOG=debug; ${lines.debug} from logLevel: 'debug'`;
      } finally {
        g.process = before;
      }
    },
  },
];

/** Fails a check that neither resolves nor rejects, so the page always finishes. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function section(name: string): { root: HTMLElement; detail: HTMLElement; out: HTMLElement } {
  const root = document.createElement('section');
  root.dataset.check = name;
  root.dataset.status = 'running';
  const title = document.createElement('h2');
  title.textContent = name;
  const detail = document.createElement('p');
  detail.className = 'detail';
  const out = document.createElement('div');
  out.className = 'out';
  root.append(title, detail, out);
  document.body.append(root);
  return { root, detail, out };
}

async function main(): Promise<void> {
  const baseUrl = new URLSearchParams(location.search).get('emulator');
  if (!baseUrl) throw new Error('missing ?emulator=<url>');
  for (const check of checks) {
    const { root, detail, out } = section(check.name);
    try {
      detail.textContent = await withTimeout(check.run({ baseUrl, out }), 20_000);
      root.dataset.status = 'pass';
    } catch (err) {
      // Shown to the runner; not console.error, which would fail the run a
      // second time for the same cause.
      detail.textContent = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      root.dataset.status = 'fail';
    }
  }
}

main()
  .catch((err: unknown) => {
    document.body.dataset.error = String(err);
  })
  .finally(() => {
    document.body.dataset.status = 'done';
  });
