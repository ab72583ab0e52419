// A page with two panels, in plain TypeScript (no UI framework), bundled by Vite:
//
//  - Node registry: search (on Enter) with OS and accelerator filters, a table
//    of results, "Load more" driven by the SDK's pagination (Page.getNextPage).
//  - Run a workflow: pick an example or paste API-format JSON, edit the prompt,
//    pick an input image (uploaded with cloud.uploadImage), Run; the executing
//    node, a progress bar, nodes done, previews as they arrive, then the outputs.
//    Cancel aborts run()'s signal, which stops this job only.
//
// The server comes from `?server=http://127.0.0.1:8188` (a local server, or the
// emulator started by `npm run example:browser`) and is used with NO key: a
// cloud API key is an account secret and never belongs in a page (README.md).
import {
  APIUserAbortError,
  CloudClient,
  JobCancelledError,
  RegistryClient,
  SubmissionError,
  WorkflowValidationError,
  type FileRef,
  type ImageFrame,
  type Node as RegistryNode,
  type Page,
  type SocketEvent,
  type WorkflowIssue,
  type WorkflowJSON,
} from '@platformui/sdk';
import invert from '../workflows/invert.json';
import relight from '../workflows/relight-api.json';

// ------------------------------------------------------------------ setup
const params = new URLSearchParams(location.search);
const server = params.get('server') ?? 'http://127.0.0.1:8188';
// `server: 'local'`: a self-hosted server of the cloud's protocol, no key; a
// running job is stopped by its own id (POST /interrupt { prompt_id }).
// `&relay`: `server` is your relay to the cloud (relay.ts), which holds the key
// and adds it: the page speaks the cloud's protocol with no key at all
// (`keyless`; a job is stopped by POST /api/queue { delete }).
const cloud = params.has('relay')
  ? new CloudClient({ baseUrl: server, server: 'cloud', keyless: true })
  : new CloudClient({ baseUrl: server, server: 'local' });
// The registry is public (no key): the emulator serves it too; elsewhere pass `&registry=`.
const registry = new RegistryClient({ baseUrl: params.get('registry') ?? server });

const $ = <T extends HTMLElement = HTMLElement>(testid: string): T => {
  const el = document.querySelector<T>(`[data-testid="${testid}"]`);
  if (!el) throw new Error(`no element [data-testid="${testid}"]`);
  return el;
};
const byId = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
document.getElementById('server')!.textContent = `server: ${server}`;

/** One line of an error, for people: the SDK's messages already say what and where. */
const describe = (err: unknown): string => (err instanceof Error ? err.message : String(err));

// ------------------------------------------------------------------ registry panel
// The registry's filter values (the spec's examples).
const OS = ['OS Independent', 'POSIX :: Linux', 'MacOS', 'Microsoft :: Windows'];
const ACCELERATORS = ['CUDA', 'ROCm', 'DirectML', 'Metal', 'CPU'];
const searchInput = $<HTMLInputElement>('search-input');
const osSelect = byId<HTMLSelectElement>('os');
const accSelect = byId<HTMLSelectElement>('accelerator');
const results = $<HTMLTableSectionElement>('search-results');
const loadMore = $<HTMLButtonElement>('load-more');
const searchError = $('search-error');
const searchCount = byId('search-count');
for (const [select, values] of [[osSelect, OS], [accSelect, ACCELERATORS]] as const) {
  for (const v of values) select.add(new Option(v, v));
}

/** The last page shown: its `getNextPage()` is "load more". */
let lastPage: Page<RegistryNode> | undefined;
/** Aborts the search or page load under way when a new search starts. */
let searching: AbortController | undefined;

function addRows(page: Page<RegistryNode>): void {
  for (const node of page.nodes) {
    const tr = results.insertRow();
    const cells = [node.name ?? node.id ?? '', node.author ?? node.publisher?.name ?? '', node.latest_version?.version ?? '',
      (node.downloads ?? 0).toLocaleString('en'), (node.github_stars ?? 0).toLocaleString('en')];
    cells.forEach((text, i) => {
      const td = tr.insertCell();
      td.textContent = text;
      td.title = text;
      if (i >= 3) td.className = 'num';
    });
  }
  lastPage = page;
  loadMore.disabled = !page.hasNextPage();
  searchCount.textContent = `${results.childElementCount} of ${page.total}`;
}

async function search(): Promise<void> {
  searching?.abort();
  const ctrl = (searching = new AbortController());
  searchError.textContent = '';
  loadMore.disabled = true;
  try {
    const page = await registry.searchNodes(
      {
        limit: 10,
        ...(searchInput.value.trim() ? { search: searchInput.value.trim() } : {}),
        ...(osSelect.value ? { supported_os: osSelect.value } : {}),
        ...(accSelect.value ? { supported_accelerator: accSelect.value } : {}),
      },
      { signal: ctrl.signal },
    );
    if (ctrl.signal.aborted) return;
    results.replaceChildren();
    addRows(page);
  } catch (err) {
    if (!ctrl.signal.aborted) searchError.textContent = `Search failed: ${describe(err)}`;
  }
}

byId<HTMLFormElement>('search-form').addEventListener('submit', (e) => {
  e.preventDefault(); // Enter in the search box
  void search();
});
osSelect.addEventListener('change', () => void search());
accSelect.addEventListener('change', () => void search());
loadMore.addEventListener('click', async () => {
  const page = lastPage;
  if (!page?.hasNextPage()) return;
  const ctrl = searching;
  loadMore.disabled = true;
  try {
    const next = await page.getNextPage();
    if (ctrl === searching) addRows(next); // not if a new search replaced the list meanwhile
  } catch (err) {
    searchError.textContent = `Loading more failed: ${describe(err)}`;
    loadMore.disabled = false;
  }
});

// ------------------------------------------------------------------ run panel
const EXAMPLES: Record<string, WorkflowJSON> = {
  'invert.json — invert an image': invert as WorkflowJSON,
  'relight-api.json — partner node (needs the account key: see the README)': relight as WorkflowJSON,
};
const select = $<HTMLSelectElement>('workflow-select');
const jsonArea = $<HTMLTextAreaElement>('workflow-json');
const promptInput = $<HTMLInputElement>('prompt-input');
const imageInput = $<HTMLInputElement>('image-input');
const runButton = $<HTMLButtonElement>('run-button');
const cancelButton = $<HTMLButtonElement>('cancel-button');
const progress = $<HTMLProgressElement>('progress');
const nodeLabel = $('node');
const nodesDone = $('nodes-done');
const preview = $<HTMLImageElement>('preview');
const outputs = $('outputs');
const errorBox = $('error');
const stateLabel = byId('state');

for (const name of Object.keys(EXAMPLES)) select.add(new Option(name, name));
select.add(new Option('(pasted JSON)', ''));

/** The inputs the prompt box edits: text inputs named like a prompt. */
const PROMPT_INPUTS = ['prompt', 'text', 'positive'];
const promptTargets = (wf: WorkflowJSON) =>
  Object.values(wf).flatMap((node) => PROMPT_INPUTS.filter((k) => typeof node.inputs?.[k] === 'string').map((k) => ({ node, k })));

function showExample(): void {
  const wf = EXAMPLES[select.value];
  if (!wf) return;
  jsonArea.value = JSON.stringify(wf, null, 2);
  const target = promptTargets(wf)[0];
  promptInput.value = target ? String(target.node.inputs[target.k]) : '';
  promptInput.disabled = !target;
  promptInput.placeholder = target ? 'Prompt text' : 'This workflow has no prompt';
}
select.addEventListener('change', showExample);
jsonArea.addEventListener('input', () => {
  select.value = '';
  promptInput.disabled = false;
});
showExample();

type State = 'idle' | 'running' | 'done' | 'failed' | 'cancelled';
function setState(state: State, error = ''): void {
  document.body.dataset.state = state;
  stateLabel.textContent = state;
  errorBox.textContent = error;
  runButton.disabled = state === 'running';
  cancelButton.disabled = state !== 'running';
}

// Object URLs of what is shown: revoked when replaced, and when the page leaves.
let previewUrl: string | undefined;
let outputUrls: string[] = [];
function showPreview(frame: ImageFrame): void {
  const url = URL.createObjectURL(new Blob([frame.image], { type: frame.mime ?? 'image/png' }));
  preview.src = url;
  if (previewUrl) URL.revokeObjectURL(previewUrl);
  previewUrl = url;
}
function clearImages(): void {
  if (previewUrl) URL.revokeObjectURL(previewUrl);
  previewUrl = undefined;
  preview.removeAttribute('src');
  outputUrls.forEach((u) => URL.revokeObjectURL(u));
  outputUrls = [];
  outputs.replaceChildren();
}
addEventListener('pagehide', clearImages);

/** Validation issues, one line per node and input. */
const listIssues = (issues: readonly WorkflowIssue[]) =>
  issues.map((i) => `• ${i.severity}: ${i.message}`).join('\n');

/** Why a run ended without a result, for the page. */
function reason(err: unknown): string {
  if (err instanceof WorkflowValidationError) return `The workflow has errors:\n${listIssues(err.issues)}`;
  if (err instanceof SubmissionError) return err.message; // "Submission rejected (400): …", per node when the server says
  return describe(err);
}

let running: AbortController | undefined;
cancelButton.addEventListener('click', () => running?.abort());

async function runWorkflow(): Promise<void> {
  clearImages();
  nodeLabel.textContent = '\u00a0';
  nodesDone.textContent = '';
  progress.value = 0;
  delete document.body.dataset.promptId;
  const ctrl = (running = new AbortController());
  const { signal } = ctrl;
  setState('running');
  try {
    let workflow: WorkflowJSON;
    try {
      const parsed: unknown = JSON.parse(jsonArea.value);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('it is not a JSON object of nodes');
      workflow = parsed as WorkflowJSON;
    } catch (err) {
      throw new Error(`Invalid workflow JSON: ${describe(err)}`);
    }
    for (const { node, k } of promptTargets(workflow)) if (!promptInput.disabled) node.inputs[k] = promptInput.value;

    // The picked image goes to the server first; every LoadImage then reads it.
    const file = imageInput.files?.[0];
    if (file) {
      nodeLabel.textContent = `uploading ${file.name}…`;
      const up = await cloud.uploadImage(file, { signal });
      const name = up.subfolder ? `${up.subfolder}/${up.name}` : up.name;
      for (const node of Object.values(workflow)) if (node.class_type === 'LoadImage') node.inputs.image = name;
    }

    // What the server would reject, found before anything is sent (object_info is fetched
    // once and cached; refreshed after an upload so the new file is listed).
    const issues = await cloud.validateWorkflow(workflow, { signal, refresh: !!file });
    const errors = issues.filter((i) => i.severity === 'error');
    if (errors.length) throw new WorkflowValidationError(errors);

    const total = Object.keys(workflow).length;
    const done = new Set<string>();
    const showDone = () => (nodesDone.textContent = `${done.size} of ${total} nodes done`);
    showDone();
    const result = await cloud.run(workflow, {
      signal, // aborting it stops this job on the server, and no other
      onSubmitted: (promptId) => void (document.body.dataset.promptId = promptId),
      onEvent: (e: SocketEvent) => {
        if (e.type === 'executing' && e.data.node) {
          const node = workflow[e.data.node];
          nodeLabel.textContent = `${node?.class_type ?? '?'} — ${node?._meta?.title ?? `#${e.data.node}`}`;
          progress.value = 0;
        } else if (e.type === 'execution_cached') {
          e.data.nodes.forEach((n) => done.add(n));
          showDone();
        } else if (e.type === 'progress_state') {
          for (const [id, n] of Object.entries(e.data.nodes)) if (n.state === 'finished') done.add(id);
          showDone();
        }
      },
      onProgress: ({ value, max }) => {
        progress.max = max;
        progress.value = value;
      },
      onPreview: showPreview,
    });

    nodeLabel.textContent = 'finished';
    done.clear();
    Object.keys(workflow).forEach((id) => done.add(id));
    showDone();
    // A local server answers /view with the file itself (the cloud answers a redirect: see the README).
    const images = result.files.filter((f: FileRef) => /\.(png|jpe?g|webp|gif)$/i.test(f.filename));
    for (const ref of images) {
      const blob = await (await cloud.download(ref, { signal })).blob();
      const url = URL.createObjectURL(blob);
      outputUrls.push(url);
      const img = document.createElement('img');
      img.alt = ref.filename;
      img.title = ref.filename;
      img.src = url;
      outputs.append(img);
    }
    setState('done');
  } catch (err) {
    if (signal.aborted || err instanceof APIUserAbortError || err instanceof JobCancelledError) setState('cancelled');
    else setState('failed', reason(err));
  } finally {
    if (running === ctrl) running = undefined;
  }
}
runButton.addEventListener('click', () => void runWorkflow());

// A first list, so the page is not empty.
void search();
