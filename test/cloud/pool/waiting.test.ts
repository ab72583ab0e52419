// The pool's waiting line, its start window (issue 23, item 12) and the rule of when a job
// can go nowhere: pure units of src/cloud/pool/, without a server.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canRun, nowhere, type Placeable } from '../../../src/cloud/pool/placement.ts';
import { StartWindow, WaitingLine } from '../../../src/cloud/pool/waiting.ts';

afterEach(() => void vi.useRealTimers());

describe('WaitingLine', () => {
  const job = (name: string, priority = 0) => ({ name, priority });
  const names = (line: WaitingLine<{ name: string; priority: number }>) => [...line].map((j) => j.name);

  it('orders by priority, equals in order; a job that must move goes before its equals', () => {
    const line = new WaitingLine<{ name: string; priority: number }>();
    for (const j of [job('low1'), job('high', 5), job('low2'), job('neg', -1), job('mid', 1), job('high2', 5)]) line.add(j);
    expect(names(line)).toEqual(['high', 'high2', 'mid', 'low1', 'low2', 'neg']);
    line.add(job('moved'), true);
    line.add(job('moved-high', 5), true);
    expect(names(line)).toEqual(['moved-high', 'high', 'high2', 'mid', 'moved', 'low1', 'low2', 'neg']);
    expect(line.length).toBe(8);
  });

  it('drain places what finds a server, keeps the rest in place, and stops when no server has room', () => {
    const line = new WaitingLine<{ name: string; priority: number }>();
    for (const n of ['a1', 'x1', 'a2', 'x2', 'a3']) line.add(job(n));
    const placed: string[] = [];
    let room = 2;
    line.drain(
      () => room > 0,
      (j) => (j.name.startsWith('a') ? 'server-a' : undefined),
      (j, server) => void (placed.push(`${j.name}@${server}`), room--),
    );
    expect(placed).toEqual(['a1@server-a', 'a2@server-a']);
    expect(names(line)).toEqual(['x1', 'x2', 'a3']);
    expect(line.remove(line[Symbol.iterator]().next().value!)).toBe(true);
    expect(line.takeAll().map((j) => j.name)).toEqual(['x2', 'a3']);
    expect(line.length).toBe(0);
  });
});

describe('StartWindow', () => {
  it('holds while a server is starting, and closes for good once every server answered', () => {
    vi.useFakeTimers();
    const ended = vi.fn();
    const w = new StartWindow(2000, ended);
    const servers = [{ state: 'up' }, { state: 'starting' }];
    expect(w.holds(servers)).toBe(true);
    servers[1]!.state = 'down'; // a failed first answer counts as an answer
    expect(w.holds(servers)).toBe(false);
    expect(w.open).toBe(false);
    // A server added later holds nothing, and the timer is gone.
    expect(w.holds([...servers, { state: 'starting' }])).toBe(false);
    vi.advanceTimersByTime(5000);
    expect(ended).not.toHaveBeenCalled();
  });

  it('a server that never answers holds the jobs until the window ends, which places them', () => {
    vi.useFakeTimers();
    const ended = vi.fn();
    const w = new StartWindow(2000, ended);
    const servers = [{ state: 'up' }, { state: 'starting' }];
    vi.advanceTimersByTime(1999);
    expect(w.holds(servers)).toBe(true);
    vi.advanceTimersByTime(1);
    expect(ended).toHaveBeenCalledOnce();
    expect(w.holds(servers)).toBe(false);
  });

  it('0 holds nothing', () => {
    const w = new StartWindow(0, () => undefined);
    expect(w.holds([{ state: 'starting' }])).toBe(false);
  });
});

describe('nowhere / canRun', () => {
  const server = (id: string, state: Placeable['state'] = 'up', downSince = 0): Placeable => ({ id, state, downSince, weight: 1, maxConcurrent: 2, active: 0, load: 0 });
  const judged = (verdicts: Record<string, string[]>, avoid: Record<string, string> = {}) => ({ verdicts: new Map(Object.entries(verdicts)), avoid: new Map(Object.entries(avoid)) });

  it('undefined while a server can run the job or is not known yet; else the reason per server', () => {
    const servers = [server('a'), server('b'), server('c', 'down', 1000)];
    expect(nowhere(servers, judged({ a: ['no class X'], b: [] }), 2000, 15_000)).toBeUndefined();
    expect(nowhere(servers, judged({ a: ['no class X'] }), 2000, 15_000)).toBeUndefined(); // b not known yet
    // c down for 15 s: counts as unable.
    expect(nowhere(servers, judged({ a: ['no class X'], b: ['no model Y'] }), 16_000, 15_000)).toEqual({ a: ['no class X'], b: ['no model Y'], c: ['down for 15 s'] });
    // Avoided servers (it failed this job) say why, whatever their verdict.
    expect(nowhere([server('a'), server('b')], judged({ a: [], b: ['no model Y'] }, { a: 'failed this job’s upload: 503' }), 0, 15_000)).toEqual({ a: ['failed this job’s upload: 503'], b: ['no model Y'] });
    expect(nowhere([], judged({}), 0, 15_000)).toEqual({});
  });

  it('canRun: able and not avoided', () => {
    expect(canRun(judged({ a: [] }), server('a'))).toBe(true);
    expect(canRun(judged({ a: ['no class X'] }), server('a'))).toBe(false);
    expect(canRun(judged({}), server('a'))).toBe(false);
    expect(canRun(judged({ a: [] }, { a: 'lost it' }), server('a'))).toBe(false);
  });
});
