// One msw server per test file, with the lifecycle every file needs: listen (an
// unhandled request is an error), reset handlers and the request log after each
// test, close at the end. `seen` holds a clone of every request, in order.
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';

export function interceptHttp() {
  const server = setupServer();
  const seen: Request[] = [];
  server.events.on('request:start', ({ request }) => void seen.push(request.clone()));
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  afterEach(() => {
    server.resetHandlers();
    seen.length = 0;
  });
  afterAll(() => server.close());
  return { server, seen };
}
