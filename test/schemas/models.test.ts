// The models: loose at runtime (unknown fields kept, open enums, wrong types
// refused, required members required), exact and named in the types. The type
// side is also in test/types/models.test-d.ts; here the compiler's own
// messages are checked to name the types (`Node`, not `{ id?: string; … }`).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import * as allSchemas from '../../src/schemas/index.ts';
import * as rules from '../../src/schemas/rules.generated.ts';
import type { Rule } from '../../src/schemas/rule.ts';
import { validate } from '../../src/schemas/validate.ts';
import * as cloud from '../../src/schemas/cloud.ts';
import * as events from '../../src/schemas/events.ts';
import * as proxy from '../../src/schemas/proxy.ts';
import * as registry from '../../src/schemas/registry.ts';

const FIXTURES = process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server';

type AnySchema = z.core.$ZodType;

/** The generated rule of a zod schema (the SDK validates with the rule; users of `/schemas` with zod). */
function ruleOf(schema: AnySchema): Rule {
  const name = Object.entries(allSchemas).find(([, v]) => v === schema)?.[0];
  const rule = name === undefined ? undefined : (rules as Record<string, unknown>)[name];
  if (rule === undefined) throw new Error('not an exported schema');
  return rule as Rule;
}

/** Validated by both, which must agree; the input itself comes back. */
const ok = (schema: AnySchema, value: unknown) => {
  const r = validate(ruleOf(schema), value);
  expect(z.safeParse(schema, value).success).toBe(r.ok);
  if (!r.ok) throw new Error(`rejected: ${JSON.stringify(r.issues)}`);
  return r.value;
};
const refused = (schema: AnySchema, value: unknown) => {
  const r = validate(ruleOf(schema), value);
  expect(z.safeParse(schema, value).success).toBe(r.ok);
  return !r.ok;
};

// Verbatim from 07_errors.jsonl (a real local server's 400 answers to POST /prompt).
const REFUSED_SUBMISSIONS = [
  {
    error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details: '', extra_info: {} },
    node_errors: {
      '1': {
        errors: [{ type: 'custom_validation_failed', message: 'Custom validation failed for node', details: 'image - Invalid image file: nope_missing.png', extra_info: { input_name: 'image' } }],
        dependent_outputs: ['2'],
        class_type: 'LoadImage',
      },
    },
  },
  { error: { type: 'invalid_prompt', message: 'Cannot execute because node NoSuchNode does not exist.', details: "Node ID '#1'", extra_info: {} }, node_errors: {} },
  { error: { type: 'no_prompt', message: 'No prompt provided', details: 'No prompt provided', extra_info: {} }, node_errors: {} },
];

describe('models at runtime (unchanged by the exact types)', () => {
  it('keep unknown fields, nested ones included, and hand back the input itself', () => {
    const node = { id: 'n', brand_new: 1, latest_version: { version: '1.0.0', extra: true }, publisher: { id: 'p', x: [1] } };
    expect(ok(registry.Node, node)).toBe(node);
    expect(ok(registry.Node, node)).toEqual(node);
    const record = { id: 'j', status: 'completed', priority: 3, outputs: { '9': { images: [{ filename: 'a.png', subfolder: '', type: 'output', extra: 1 }], text: ['t'] } } };
    expect(ok(cloud.JobRecordBody, record)).toEqual(record);
    const task = { data: { task_id: 't', status: 'IN_PROGRESS', eta: 12 }, meta: 1 };
    expect(ok(proxy.TaskRecord, task)).toEqual(task);
    const executed = { node: '9', output: { images: [], gifs: [{ filename: 'g' }] }, prompt_id: 'p', display_node: '9', later: true };
    expect(ok(events.ExecutedData, executed)).toEqual(executed);
  });

  it('keep enums open', () => {
    expect(ok(registry.Node, { status: 'NodeStatusFuture' })).toEqual({ status: 'NodeStatusFuture' });
    for (const status of ['CREATED', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'QUEUED_SOMEWHERE_NEW']) {
      expect(ok(proxy.Task, { task_id: 't', status })).toEqual({ task_id: 't', status });
      expect(ok(proxy.TaskNotification, { status })).toEqual({ status });
    }
    expect(proxy.TASK_STATUSES).toEqual(['CREATED', 'IN_PROGRESS', 'COMPLETED', 'FAILED']);
  });

  it('refuse wrong types', () => {
    expect(refused(registry.Node, { downloads: 'many' })).toBe(true);
    expect(refused(registry.Node, { latest_version: { deprecated: 'no' } })).toBe(true);
    expect(refused(proxy.TaskRecord, { data: { task_id: 7, status: 'CREATED' } })).toBe(true);
    expect(refused(cloud.JobList, { jobs: [], pagination: { offset: '0', has_more: false } })).toBe(true);
    expect(refused(events.StatusData, { status: { exec_info: { queue_remaining: '1' } } })).toBe(true);
  });

  it('require what the spec and every recording carry, and nothing else', () => {
    expect(ok(cloud.UploadResponse, { name: 'a.png', subfolder: '' })).toBeTruthy();
    expect(refused(cloud.UploadResponse, { subfolder: '' })).toBe(true);
    // Sent by every server recorded, but not worth failing an upload or all of object_info over.
    expect(ok(cloud.UploadResponse, { name: 'a.png' })).toBeTruthy();
    expect(ok(cloud.NodeDefinition, { display_name: 'X' })).toBeTruthy();
    expect(refused(cloud.NodeDefinition, { input: 'x' })).toBe(true);
    expect(ok(cloud.NodeDefinition, { input: {} })).toBeTruthy();
    expect(ok(cloud.FileRef, { filename: 'a.png' })).toBeTruthy();
    expect(ok(registry.Node, {})).toEqual({});
    expect(ok(proxy.Task, { task_id: 't', status: 'CREATED' })).toBeTruthy();
    expect(ok(cloud.SubmissionResponse, { prompt_id: 'p', number: 3, node_errors: {} })).toBeTruthy();
  });

  it('read a refused submission body, as recorded and with members left out', () => {
    for (const body of REFUSED_SUBMISSIONS) expect(ok(cloud.SubmissionErrorBody, body)).toBe(body);
    expect(ok(cloud.SubmissionErrorBody, { error: 'bad workflow' })).toBeTruthy();
    expect(ok(cloud.SubmissionErrorBody, { error: { type: 't', message: 'm' }, node_errors: { '2': { errors: [{ type: 't', message: 'm' }] } } })).toBeTruthy();
    expect(refused(cloud.SubmissionErrorBody, { error: 3 })).toBe(true);
    expect(refused(cloud.SubmissionErrorBody, { error: 'x', node_errors: { '1': { errors: 'no' } } })).toBe(true);
  });

  it.skipIf(!existsSync(FIXTURES))('accept every recorded answer of a real local server', () => {
    const seen: string[] = [];
    const schemaFor = (method: string, path: string, status: number): AnySchema | undefined => {
      if (status !== 200) return method === 'POST' && /\/prompt$/.test(path) ? cloud.SubmissionErrorBody : undefined;
      if (/\/upload\/(image|mask)$/.test(path)) return cloud.UploadResponse;
      if (method === 'POST' && /\/prompt$/.test(path)) return cloud.SubmissionResponse;
      if (/\/api\/jobs\/[^/?]+$/.test(path)) return cloud.JobRecordBody;
      if (/\/api\/jobs(\?|$)/.test(path)) return cloud.JobList;
      if (/\/history\/[^/?]+$/.test(path)) return cloud.History;
      if (/\/queue$/.test(path) && method === 'GET') return cloud.Queue;
      return undefined;
    };
    for (const f of readdirSync(FIXTURES).filter((n) => n.endsWith('.jsonl'))) {
      for (const line of readFileSync(`${FIXTURES}/${f}`, 'utf8').split('\n')) {
        if (!line) continue;
        const e = JSON.parse(line);
        if (e.dir === 'http') {
          const schema = schemaFor(e.method, e.path, e.status);
          if (schema && typeof e.body === 'object') {
            ok(schema, e.body);
            seen.push(`${e.method} ${e.path}`);
          }
        } else if (e.dir === 'in' && e.kind === 'text') {
          const schema = (events.EVENT_SCHEMAS as Record<string, AnySchema>)[e.json.type];
          if (schema) ok(schema, e.json.data);
        }
      }
    }
    expect(seen.length).toBeGreaterThan(20);
    const info = JSON.parse(readFileSync(`${FIXTURES}/object_info.json`, 'utf8'));
    expect(ok(cloud.ObjectInfo, info)).toBe(info);
  });
});

describe('models in the compiler', () => {
  // One program over a small file that imports the public entry, as a user's would.
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const file = `${root}test/schemas/__schema_types_probe.ts`;
  const source = [
    "import { CloudClient, RegistryClient, type FileRef, type Node } from '../../src/index.ts';",
    'declare const node: Node;',
    'declare const cloud: CloudClient;',
    'declare const registry: RegistryClient;',
    'export async function probe() {',
    '  node.naem;',
    '  node.githubStars;',
    '  (await cloud.waitForJob("id")).outptus;',
    '  (await cloud.getJobStatus("id")).statsu;',
    "  const ref: FileRef = { filename: 'a', subfloder: '' };",
    '  const n: number = node;',
    "  (await registry.searchNodes()).nodes[0]!.latest_version!.verison;",
    '  return ref && n;',
    '}',
  ].join('\n');

  it('report typos against the named types', () => {
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: ['node'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
    };
    const host = ts.createCompilerHost(options);
    const read = host.readFile.bind(host);
    host.readFile = (name) => (name === file ? source : read(name));
    const exists = host.fileExists.bind(host);
    host.fileExists = (name) => name === file || exists(name);
    const program = ts.createProgram([file], options, host);
    const messages = ts
      .getPreEmitDiagnostics(program, program.getSourceFile(file))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]!);
    expect(messages).toEqual([
      "Property 'naem' does not exist on type 'Node'.",
      "Property 'githubStars' does not exist on type 'Node'. Did you mean 'github_stars'?",
      "Property 'outptus' does not exist on type 'JobRecord'. Did you mean 'outputs'?",
      "Property 'statsu' does not exist on type 'JobStatusResult'. Did you mean 'status'?",
      "Object literal may only specify known properties, but 'subfloder' does not exist in type 'FileRef'. Did you mean to write 'subfolder'?",
      "Type 'Node' is not assignable to type 'number'.",
      "Property 'verison' does not exist on type 'NodeVersion'. Did you mean 'version'?",
    ]);
  }, 60_000);
});
