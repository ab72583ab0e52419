// What validating a large response costs: `isValid()` with the generated rules on a 1,000-job list,
// a 100-node registry page, a 200-entry history, and a real object_info (440 classes, 380 KB), against
// zod's own safeParse of the same schema on the same value (which clones what it accepts). Each
// value is validated many times per round; rounds alternate which side runs first so drift hits
// both alike; the ratio is taken from the per-side medians. Target: the rules cost less than zod.
// For scale, what JSON.parse of the same response costs (a response is parsed before it is checked).
// The per-call times are comparable across builds of the SDK (this file reads src/): run it in a
// worktree of another commit for a before/after.
// Erasable TS only: run by `node --experimental-strip-types`.
import { existsSync, readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import * as schemas from '../src/schemas/index.ts';
import * as rules from '../src/schemas/rules.generated.ts';
import { isValid } from '../src/schemas/validate.ts';
import { median } from './registry.ts';

const FIXTURES = process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server';
const ROUNDS = 7;
/** Work per round and case, in values validated × their size, so every case runs about as long. */
const BUDGET_MS = 40;

interface Case {
  label: string;
  name: keyof typeof rules & keyof typeof schemas;
  value: unknown;
}

function jobList(n: number): unknown {
  const jobs = [];
  for (let i = 0; i < n; i++) {
    const failed = i % 10 === 0;
    jobs.push({
      id: `8d1b2a49-8b8e-4f69-95c6-${String(i).padStart(12, '0')}`,
      status: failed ? 'failed' : 'completed',
      create_time: 1795324115016 + i,
      execution_start_time: 1795324115020 + i,
      execution_end_time: 1795324116020 + i,
      outputs_count: failed ? 0 : 2,
      workflow_id: i % 3 ? null : `wf-${i}`,
      preview_output: failed ? null : { filename: `out_${i}.png`, subfolder: '', type: 'output', nodeId: '9', mediaType: 'images' },
      execution_error: failed ? { node_id: '3', node_type: 'KSampler', exception_message: 'CUDA out of memory', exception_type: 'RuntimeError', traceback: ['a', 'b'] } : null,
    });
  }
  return { jobs, pagination: { offset: 0, limit: n, total: 5 * n, has_more: true } };
}

function nodePage(n: number): unknown {
  const nodes = [];
  for (let i = 0; i < n; i++) {
    nodes.push({
      id: `pack-${i}`,
      name: `Pack ${i}`,
      author: 'someone',
      description: 'Nodes that do things to images, at some length, as descriptions are.',
      category: 'image',
      downloads: 1000 * i,
      github_stars: i,
      rating: 4.5,
      repository: `https://github.com/someone/pack-${i}`,
      tags: ['image', 'upscale'],
      supported_os: ['linux', 'windows'],
      latest_version: { id: `v${i}`, version: '1.2.3', createdAt: '2026-01-01T00:00:00Z', dependencies: ['torch', 'numpy'], deprecated: false, status: 'NodeVersionStatusActive' },
      publisher: { id: 'someone', name: 'Someone', members: [{ id: 'm1', user: { id: 'u1', name: 'U', email: 'u@example.com' } }] },
      status: 'NodeStatusActive',
    });
  }
  return { nodes, page: 1, limit: n, total: 10 * n, totalPages: 10 };
}

function history(n: number): unknown {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    out[`prompt-${i}`] = {
      prompt: [i, `prompt-${i}`, { '1': { class_type: 'LoadImage', inputs: { image: 'a.png' } } }, {}, ['9']],
      outputs: { '9': { images: [{ filename: `o_${i}.png`, subfolder: '', type: 'output' }] } },
      status: { status_str: 'success', completed: true, messages: [['execution_start', { prompt_id: `prompt-${i}`, timestamp: 1 }]] },
      meta: { '9': { node_id: '9', display_node: '9', parent_node: null, real_node_id: '9' } },
    };
  }
  return out;
}

function cases(): { list: Case[]; notes: string[] } {
  const list: Case[] = [
    { label: 'JobList, 1,000 jobs', name: 'JobList', value: jobList(1000) },
    { label: 'NodePage, 100 packs', name: 'NodePage', value: nodePage(100) },
    { label: 'History, 200 entries', name: 'History', value: history(200) },
  ];
  const notes: string[] = [];
  const path = `${FIXTURES}/object_info.json`;
  if (existsSync(path)) {
    const info = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    list.push({ label: `ObjectInfo, ${Object.keys(info).length} classes`, name: 'ObjectInfo', value: info });
  } else notes.push(`(${path} not found: object_info not measured)`);
  return { list, notes };
}

/** Milliseconds per call of `f` on `value`, over `n` calls. */
function time(f: (v: unknown) => boolean, value: unknown, n: number): number {
  let ok = 0;
  const t = performance.now();
  for (let i = 0; i < n; i++) if (f(value)) ok++;
  const ms = performance.now() - t;
  if (ok !== n) throw new Error('a benchmark value is not valid');
  return ms / n;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'validating large responses: isValid (rules) vs zod safeParse';
  const { list, notes } = cases();
  const lines: string[] = [];
  let ok = true;
  for (const c of list) {
    const rule = rules[c.name] as Parameters<typeof isValid>[0];
    const schema = schemas[c.name] as unknown as z.ZodMiniType;
    const ours = (v: unknown) => isValid(rule, v);
    const theirs = (v: unknown) => z.safeParse(schema, v).success;
    // Warm-up, and how many calls fill the budget.
    const once = Math.max(time(ours, c.value, 20), time(theirs, c.value, 20));
    const n = Math.max(5, Math.round(BUDGET_MS / once));
    time(ours, c.value, n), time(theirs, c.value, n);
    const a: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2) a.push(time(ours, c.value, n)), b.push(time(theirs, c.value, n));
      else b.push(time(theirs, c.value, n)), a.push(time(ours, c.value, n));
    }
    const ratio = median(a) / median(b);
    ok &&= ratio < 1;
    const text = JSON.stringify(c.value);
    const parse = median([0, 1, 2].map(() => time((t) => JSON.parse(t as string) !== null, text, Math.max(5, n >> 2))));
    lines.push(
      `${c.label} (${(text.length / 1024).toFixed(0)} KB of JSON): isValid ${(median(a) * 1000).toFixed(1)} µs, zod safeParse ${(median(b) * 1000).toFixed(1)} µs: ` +
        `${ratio.toFixed(3)}× zod (target < 1×) ${ratio < 1 ? 'PASS' : 'FAIL'}; JSON.parse of it ${(parse * 1000).toFixed(0)} µs (isValid ${((median(a) / parse) * 100).toFixed(0)}% of it)`,
    );
  }
  return { name, lines: [...lines, ...notes], ok };
}
