// The "waiting for …" line of a terminal (WaitNotice), on a fake clock: it appears
// once a request has waited a second with nothing written, counts the seconds, gives
// way to any output, and goes when the transport's debug line ends the request.
// Its run on a real terminal against a server that never answers is in
// test/cli/main.int.test.ts.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WaitNotice } from '../../src/cli/waiting.ts';

const ERASE = '\r\x1b[K';

function terminal() {
  let text = '';
  return { out: { write: (s: string) => void (text += s), isTTY: true, columns: 80 }, text: () => text, reset: () => void (text = '') };
}

/** The transport's beforeRequest, then (later) its debug line of the attempt. */
const request = (notice: WaitNotice, method: string, url: string) => notice.hooks.beforeRequest![0]!({ request: new Request(url, { method }), retryCount: 0 });
const attemptEnded = (notice: WaitNotice, method: string, url: string) => notice.logged({ requestId: 'req_1', method, url, status: 200, durationMs: 1, attempt: 1 });

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('WaitNotice', () => {
  it('after a quiet second: what it waits for (no query), its seconds counting; erased by the answer', async () => {
    const t = terminal();
    const notice = new WaitNotice(t.out);
    await request(notice, 'GET', 'http://127.0.0.1:8787/api/queue?token=SECRET');
    vi.advanceTimersByTime(999);
    expect(t.text()).toBe('');
    vi.advanceTimersByTime(1);
    expect(t.text()).toBe(`${ERASE}waiting for http://127.0.0.1:8787 (GET /api/queue)… 1s`);
    vi.advanceTimersByTime(1000);
    expect(t.text().endsWith(`${ERASE}waiting for http://127.0.0.1:8787 (GET /api/queue)… 2s`)).toBe(true);
    expect(t.text()).not.toContain('SECRET');
    t.reset();
    // The debug line of another request ends nothing; this one's ends the wait.
    notice.logged({ message: 'socket: status' });
    attemptEnded(notice, 'GET', 'http://127.0.0.1:8787/api/other');
    expect(t.text()).toBe('');
    attemptEnded(notice, 'GET', 'http://127.0.0.1:8787/api/queue');
    expect(t.text()).toBe(ERASE);
    vi.advanceTimersByTime(5000);
    expect(t.text()).toBe(ERASE);
  });

  it('output first erases the line, and the next one waits for another quiet second', async () => {
    const t = terminal();
    const notice = new WaitNotice(t.out);
    const stdout = terminal();
    const wrapped = notice.wrap(stdout.out);
    expect([wrapped.isTTY, wrapped.columns]).toEqual([true, 80]);
    await request(notice, 'POST', 'http://127.0.0.1:8787/api/upload/image');
    vi.advanceTimersByTime(500);
    wrapped.write('Uploaded a.png\n');
    vi.advanceTimersByTime(999);
    expect(t.text()).toBe('');
    vi.advanceTimersByTime(1);
    expect(t.text()).toBe(`${ERASE}waiting for http://127.0.0.1:8787 (POST /api/upload/image)… 1s`);
    t.reset();
    wrapped.write('a line\n');
    expect(t.text()).toBe(ERASE);
    expect(stdout.text()).toBe('Uploaded a.png\na line\n');
  });

  it('the oldest request is the one named; close() erases the line for good', async () => {
    const t = terminal();
    const notice = new WaitNotice(t.out);
    await request(notice, 'GET', 'http://a.test/api/queue');
    vi.advanceTimersByTime(300);
    await request(notice, 'GET', 'http://b.test/api/jobs');
    vi.advanceTimersByTime(700);
    expect(t.text()).toContain('waiting for http://a.test (GET /api/queue)… 1s');
    attemptEnded(notice, 'GET', 'http://a.test/api/queue');
    vi.advanceTimersByTime(1000);
    expect(t.text()).toMatch(/waiting for http:\/\/b\.test \(GET \/api\/jobs\)… 1s$/);
    notice.close();
    expect(t.text().endsWith(ERASE)).toBe(true);
    t.reset();
    vi.advanceTimersByTime(10_000);
    expect(t.text()).toBe('');
  });
});
