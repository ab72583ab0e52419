// The WebSocket JSON pipeline (parseMessage: JSON.parse + envelope + compiled
// schema check, then promptIdOf + a Map-based route by prompt_id) over 100,000
// messages built by cycling the recorded server messages, against bare
// JSON.parse of the same strings. Target: ratio ≤ 2.
// Also reports, for scale, what zod's own safeParse would cost in its place.
// Rounds alternate which side runs first so drift hits both alike; the ratio
// is taken from the per-side medians.
// Erasable TS only: run by `node --experimental-strip-types`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { parseMessage, promptIdOf, type CloudMessage } from '../src/cloud/messages.ts';
import { EVENT_SCHEMAS, type EventType } from '../src/schemas/events.ts';

const FIXTURES = process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server';
const COUNT = 100_000;
const ROUNDS = 9;
const TARGET = 2;

// Used only when the recordings are not on this machine: a few of their messages, verbatim.
const FALLBACK = [
  '{"type":"status","data":{"status":{"exec_info":{"queue_remaining":1}}}}',
  '{"type":"execution_start","data":{"prompt_id":"8d1b2a49-8b8e-4f69-95c6-231fc8ab70ae","timestamp":1795324115016}}',
  '{"type":"progress_state","data":{"prompt_id":"8d1b2a49-8b8e-4f69-95c6-231fc8ab70ae","nodes":{"1":{"value":1,"max":1,"state":"finished","node_id":"1","prompt_id":"8d1b2a49-8b8e-4f69-95c6-231fc8ab70ae","display_node_id":"1","parent_node_id":null,"real_node_id":"1"},"2":{"value":0,"max":1,"state":"running","node_id":"2","prompt_id":"8d1b2a49-8b8e-4f69-95c6-231fc8ab70ae","display_node_id":"2","parent_node_id":null,"real_node_id":"2"}}}}',
  '{"type":"executing","data":{"node":"2","display_node":"2","prompt_id":"8d1b2a49-8b8e-4f69-95c6-231fc8ab70ae"}}',
  '{"type":"executed","data":{"node":"2","display_node":"2","output":{"images":[{"filename":"t_00001_.png","subfolder":"","type":"output"}]},"prompt_id":"8d1b2a49-8b8e-4f69-95c6-231fc8ab70ae"}}',
  '{"type":"execution_success","data":{"prompt_id":"8d1b2a49-8b8e-4f69-95c6-231fc8ab70ae","timestamp":1795324115030}}',
];

/** The text messages the server sent in the recordings, re-serialized as the wire carried them. */
export function recordedMessages(): string[] {
  if (!existsSync(FIXTURES)) return FALLBACK;
  const out: string[] = [];
  for (const f of readdirSync(FIXTURES).filter((n) => n.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(join(FIXTURES, f), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const rec = JSON.parse(line) as { dir?: string; kind?: string; json?: unknown };
      if (rec.dir === 'in' && rec.kind === 'text') out.push(JSON.stringify(rec.json));
    }
  }
  return out.length ? out : FALLBACK;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = 'parseMessage + validate + route vs bare JSON.parse (100k messages)';
  const recorded = recordedMessages();
  const messages: string[] = [];
  for (let i = 0; i < COUNT; i++) messages.push(recorded[i % recorded.length]!);
  const bytes = messages.reduce((n, s) => n + s.length, 0);

  const routes = new Map<string, number>();
  let sink = 0;
  const bare = () => {
    const t = performance.now();
    for (let i = 0; i < messages.length; i++) {
      const v = JSON.parse(messages[i]!) as { type: string };
      sink += v.type.length;
    }
    return performance.now() - t;
  };
  const pipeline = () => {
    const t = performance.now();
    for (let i = 0; i < messages.length; i++) {
      const m: CloudMessage = parseMessage(messages[i]!);
      const id = promptIdOf(m);
      if (id !== undefined) routes.set(id, (routes.get(id) ?? 0) + 1);
      else sink += m.type.length;
    }
    return performance.now() - t;
  };
  // For scale only: the same pipeline with zod's own safeParse (which clones) as the validator.
  const viaSafeParse = () => {
    const t = performance.now();
    for (let i = 0; i < messages.length; i++) {
      const v = JSON.parse(messages[i]!) as { type: string; data: unknown };
      const schema = (EVENT_SCHEMAS as Record<string, z.ZodMiniType>)[v.type as EventType];
      const r = schema ? z.safeParse(schema, v.data) : undefined;
      const id = r?.success ? (r.data as { prompt_id?: unknown }).prompt_id : undefined;
      if (typeof id === 'string') routes.set(id, (routes.get(id) ?? 0) + 1);
    }
    return performance.now() - t;
  };

  // Sanity: the recorded messages are all known or unknown, never invalid or malformed.
  const kinds = new Map<string, number>();
  for (const s of recorded) {
    const m = parseMessage(s);
    const k = m.type === 'unknown' ? `unknown(${m.rawType})` : m.type;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  const broken = (kinds.get('invalid') ?? 0) + (kinds.get('malformed') ?? 0);

  bare(), pipeline(), bare(), pipeline(); // warm-up
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2) a.push(pipeline()), b.push(bare());
    else b.push(bare()), a.push(pipeline());
  }
  const zodTimes = [viaSafeParse(), viaSafeParse(), viaSafeParse()];
  const ratio = median(a) / median(b);
  const zodRatio = median(zodTimes) / median(b);
  const ok = ratio <= TARGET && broken === 0;
  const us = (ms: number) => `${((ms * 1000) / COUNT).toFixed(2)} µs/msg`;
  return {
    name,
    ok,
    lines: [
      `${COUNT} messages cycled from ${recorded.length} recorded ones (${(bytes / 1e6).toFixed(1)} MB of JSON); kinds: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`,
      `bare JSON.parse: ${median(b).toFixed(1)} ms (${us(median(b))})`,
      `parseMessage + validate + route: ${median(a).toFixed(1)} ms (${us(median(a))})`,
      `ratio ${ratio.toFixed(2)}× (target ≤ ${TARGET}×) ${ratio <= TARGET ? 'PASS' : 'FAIL'}${broken ? `; ${broken} recorded message(s) invalid or malformed: FAIL` : ''}`,
      `for scale, with zod safeParse as the validator: ${median(zodTimes).toFixed(1)} ms, ${zodRatio.toFixed(2)}× bare JSON.parse`,
      `(routes: ${routes.size} prompt ids, sink ${sink})`,
    ],
  };
}
