// The editor's saved format → the API format (Workflow.fromEditor), against fixtures written from the
// spec (../shared/spec/editor-workflow.md, sections 2–5) independently of the converter:
// test/fixtures/editor/README.md lists each case and the rule it proves.
//
// `<case>.editor.json` is a workflow as the editor saves it; `<case>.api.json` (or `<case>.<variant>.api.json`,
// converted with the options VARIANTS gives) is exactly what the editor would submit for it, compared as JSON text,
// so order counts: nodes as byId sorts them, each `{ inputs, class_type, _meta }`, inputs in the editor's order
// (widget values by name in widget order, then links in input order; a link into a widget's socket keeps the
// widget's place). A case without an API file must be refused as ERRORS says.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { MissingPacks } from '../../src/registry/missing-packs.ts';
import type { ObjectInfo } from '../../src/schemas/cloud.ts';
import { convertEditorWorkflow, type EditorOptions } from '../../src/workflow/editor.ts';
import type { WorkflowIssue } from '../../src/workflow/validate.ts';
import { Workflow } from '../../src/workflow/workflow.ts';
import { refusal } from '../helpers/refusal.ts';

const DIR = fileURLToPath(new URL('../fixtures/editor/', import.meta.url));
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const SERVER_INFO = `${process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server'}/object_info.json`;

// The classes the fixtures use, copied from ComfyUI 0.8.0's object_info, and the README's own classes for rules it cannot show.
const real = JSON.parse(read('object_info.real.json')) as ObjectInfo;
const custom = JSON.parse(read('object_info.custom.json')) as ObjectInfo;
const info: ObjectInfo = { ...real, ...custom };

/**
 * A `random` returning `values` in turn. The editor picks option `Math.floor(random() * options.length)` of each
 * `{a|b|c}`, left to right, an outer choice before the choices inside the option it picked (its processDynamicPrompt).
 */
const sequence = (...values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length]!;
};

/** Options per expectation file (its name without `.api.json`); `{}` when not listed. A function: `random` keeps state. */
const VARIANTS: Record<string, () => EditorOptions> = {
  'dynamic-prompts.first': () => ({ random: () => 0 }),
  'dynamic-prompts.last': () => ({ random: () => 0.99 }),
  'dynamic-prompts.sequence': () => ({ random: sequence(0.5, 0.6, 0.1, 0.9) }),
  'dynamic-prompts-primitive.last': () => ({ random: () => 0.99 }),
  'error-widget-count.widgetValues-editor': () => ({ widgetValues: 'editor' }),
};

/** The nodes `widgetValues: 'editor'` changed, one warning each; every other conversion has none. */
const WARNINGS: Record<string, string[]> = {
  'error-widget-count.widgetValues-editor': ['2', '3', '4'],
};

/** What each case without an API file must be refused for (by default): one issue per entry, each naming its node. */
const ERRORS: Record<string, Array<{ code: string; nodeId: string; title: string }>> = {
  'error-unknown-class': [{ code: 'unknown_class', nodeId: '4', title: 'My upscaler' }],
  // Inside a subgraph, a node is named by its API id (5.3).
  'error-unknown-inner-class': [{ code: 'unknown_class', nodeId: '10:2', title: 'Inner upscaler' }],
  'error-widget-count': [
    { code: 'widget_values_mismatch', nodeId: '2', title: 'Scale down' },
    { code: 'widget_values_mismatch', nodeId: '3', title: 'Too many' },
    { code: 'widget_values_mismatch', nodeId: '4', title: 'Old noise' },
  ],
  'error-missing-link': [{ code: 'broken_link', nodeId: '2', title: 'Flip colors' }],
  'error-link-from-missing-node': [{ code: 'broken_link', nodeId: '2', title: 'Orphan' }],
  'error-group-node': [
    { code: 'unsupported_node', nodeId: '5', title: 'Grouped' },
    { code: 'unsupported_node', nodeId: '6', title: 'Old grouped' },
  ],
  'error-dynamic-combo': [{ code: 'unsupported_node', nodeId: '2', title: 'Resize' }],
};

// real/: the twins test/real-server/editor-twins.ts runs on a server, converted here too.
const files = [...readdirSync(DIR), ...readdirSync(join(DIR, 'real')).map((f) => `real/${f}`)];
const cases = files.filter((f) => f.endsWith('.editor.json')).map((f) => f.slice(0, -'.editor.json'.length));
const expectations = files.filter((f) => f.endsWith('.api.json')).map((f) => f.slice(0, -'.api.json'.length));
const caseOf = (expectation: string) => expectation.split('.')[0]!;

/** `value`, frozen all the way down: a converter that writes into its input throws (modules run in strict mode). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}


const text = (json: unknown) => JSON.stringify(json, null, 2);

describe('the editor fixtures', () => {
  it('has an expectation for every case, and the README names each case', () => {
    const readme = read('README.md');
    for (const c of cases) {
      expect(expectations.some((e) => caseOf(e) === c) || c in ERRORS, `${c}: no .api.json and no ERRORS entry`).toBe(true);
      expect(readme, `README.md does not list ${c}`).toContain(`\`${c}\``);
    }
    for (const e of [...expectations, ...Object.keys(VARIANTS)]) expect(cases, `${e}: no ${caseOf(e)}.editor.json`).toContain(caseOf(e));
    for (const c of Object.keys(ERRORS)) expect(cases).toContain(c);
  });

  it.skipIf(!existsSync(SERVER_INFO))('copies each real class verbatim from the server object_info', () => {
    const server = JSON.parse(readFileSync(SERVER_INFO, 'utf8')) as ObjectInfo;
    for (const [name, def] of Object.entries(real)) expect(def, name).toEqual(server[name]);
    // The README's own classes are not the server's.
    for (const name of Object.keys(custom)) expect(server[name], name).toBeUndefined();
  });
});

describe('Workflow.fromEditor on each fixture', () => {
  for (const name of expectations) {
    const editorText = read(`${caseOf(name)}.editor.json`);
    const options = VARIANTS[name] ?? (() => ({}));

    it(`${name}: converts to exactly what the editor submits`, () => {
      const wf = Workflow.fromEditor(JSON.parse(editorText), info, options());
      expect(text(wf.toJSON())).toBe(text(JSON.parse(read(`${name}.api.json`))));
      const warned = wf.warnings.map((w) => {
        expect(w.severity).toBe('warning');
        return w.nodeId;
      });
      expect(warned.sort()).toEqual(WARNINGS[name] ?? []);
    });

    it(`${name}: never modifies its input, and converts its text as its object`, () => {
      const pristine = JSON.parse(editorText);
      const frozen = deepFreeze(JSON.parse(editorText));
      const fromObject = Workflow.fromEditor(frozen, deepFreeze(structuredClone(info)), options()).toJSON();
      expect(frozen).toEqual(pristine);
      expect(text(Workflow.fromEditor(editorText, info, options()).toJSON())).toBe(text(fromObject));
      // Workflow.from takes the editor's format too, given object_info (as fromEditor converts it).
      if (!VARIANTS[name]) expect(text(Workflow.from(editorText, info).toJSON())).toBe(text(fromObject));
    });
  }
});

describe('the interface a file exposes (extra.linearData.inputs)', () => {
  it('is exactly the listed [nodeId, widgetName] pairs, with API node ids', () => {
    const { exposed, issues } = convertEditorWorkflow(JSON.parse(read('linear-data.editor.json')), info);
    expect(issues).toEqual([]);
    expect(exposed).toEqual(JSON.parse(read('linear-data.exposed.json')));
  });

  it('a widget promoted through nested subgraphs names the inner node that holds it, whose value the outer instance gives', () => {
    const saved = JSON.parse(read('subgraph-nested.editor.json'));
    const [outer, inner] = saved.definitions.subgraphs as Array<{ inputs: object[]; links: object[]; nodes: Array<{ id: number; inputs: Array<{ name: string; link: number | null }> }> }>;
    // The outer subgraph promotes the inner instance's promoted blur_radius; the root instance holds its value, 7.
    outer!.inputs.push({ id: 'r', name: 'blur_radius', type: 'INT', linkIds: [9] });
    outer!.links.push({ id: 9, origin_id: -10, origin_slot: 1, target_id: 5, target_slot: 1, type: 'INT' });
    outer!.nodes.find((n) => n.id === 5)!.inputs[1]!.link = 9;
    const root = saved.nodes.find((n: { id: number }) => n.id === 30);
    root.inputs.push({ name: 'blur_radius', type: 'INT', link: null, widget: { name: 'blur_radius' } });
    root.widgets_values = [7];
    saved.extra = { linearData: { inputs: [[30, 'blur_radius']] } };
    const { exposed, workflow, issues } = convertEditorWorkflow(saved, info);
    expect(issues).toEqual([]);
    expect(inner!.nodes.map((n) => n.id)).toContain(1);
    expect(exposed).toEqual([{ nodeId: '30:5:1', input: 'blur_radius' }]);
    expect(workflow['30:5:1']!.inputs.blur_radius).toBe(7);
  });

  it('is absent when the file lists none', () => {
    expect(convertEditorWorkflow(JSON.parse(read('basics.editor.json')), info).exposed).toBeUndefined();
  });
});

describe('refusals', () => {
  for (const [name, expected] of Object.entries(ERRORS)) {
    it(`${name}: InvalidArgumentError naming each node by id and title`, () => {
      const err = refusal(() => Workflow.fromEditor(read(`${name}.editor.json`), info));
      const issues = err.issues as readonly WorkflowIssue[];
      expect(issues.map((i) => ({ code: i.code, nodeId: i.nodeId, title: i.title })).sort((a, b) => a.nodeId!.localeCompare(b.nodeId!))).toEqual(expected);
      for (const i of issues) {
        expect(i.severity).toBe('error');
        expect(i.message).toContain(`#${i.nodeId}`);
        expect(i.message).toContain(i.title);
      }
      expect(err.message).toContain(issues[0]!.message);
    });
  }

  it('error-unknown-class, given the packs: names the pack to install', () => {
    const packs: MissingPacks = {
      packs: [{ id: 'fancy-pack', node: {} as never, classTypes: ['FancyUpscaler'], version: '1.2.0', downloadUrl: undefined }],
      unknown: [],
      coreUpdate: [],
      outsideRegistry: [],
    };
    const err = refusal(() => Workflow.fromEditor(read('error-unknown-class.editor.json'), info, { packs }));
    const [issue] = err.issues as readonly WorkflowIssue[];
    expect(issue).toMatchObject({ code: 'unknown_class', nodeId: '4', title: 'My upscaler', pack: { id: 'fancy-pack', version: '1.2.0' } });
    expect(err.message).toContain('"fancy-pack"');
    expect(err.message).toContain('#4');
  });

  it('the editor format without object_info: Workflow.from refuses it and says to pass object_info', () => {
    const err = refusal(() => Workflow.from(read('basics.editor.json')));
    expect(err.message).toMatch(/object_info/);
    expect(err.message).toContain('Workflow.fromEditor(json, objectInfo)');
  });
});
