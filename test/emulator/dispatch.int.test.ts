/**
 * The emulator's one dispatcher (`src/emulator/dispatch.ts`) over the real route tables of every service: which
 * named handler a method and path reach, the parameters, and when a request is a 404 or a 405 (with the methods
 * the path has, in table order, as the router's `Allow` lists them).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudRoutes, missingRouteHint } from '../../src/emulator/cloud-routes.ts';
import type { CloudState } from '../../src/emulator/cloud.ts';
import { RouteTable, routeTable, type Route } from '../../src/emulator/dispatch.ts';
import { Faults, Router } from '../../src/emulator/http.ts';
import { PERSONALITIES, type PersonalityName } from '../../src/emulator/personality.ts';
import { proxyRoutes, ProxyState } from '../../src/emulator/proxy.ts';
import { registryRoutes } from '../../src/emulator/registry-routes.ts';
import { uploadRoutes } from '../../src/emulator/registry-versions.ts';
import { RegistryState } from '../../src/emulator/registry.ts';
import { signedContentRoutes, v2Routes } from '../../src/emulator/v2/routes.ts';
import type { V2State } from '../../src/emulator/v2/state.ts';

/** The main server's table of an emulator of `personality`, as `startEmulator` builds it (no handler runs here). */
function mainTable(personality: PersonalityName): RouteTable {
  const p = PERSONALITIES[personality];
  const service = p.v2 ? v2Routes({} as V2State) : cloudRoutes({ personality: p } as CloudState);
  return new RouteTable([...registryRoutes(new RegistryState()), ...proxyRoutes(new ProxyState()), ...service]);
}

/** `'METHOD /path'` → the handler's name, `404`, or `405 GET, POST` (the methods the path has). */
function dispatch(table: RouteTable, request: string): string {
  const [method = '', target = ''] = request.split(' ');
  const d = table.match(method === 'HEAD' ? 'GET' : method, target.split('/').slice(1).map(decodeURIComponent));
  if (d.route) return `${d.route.name}${Object.keys(d.params).length ? ' ' + JSON.stringify(d.params) : ''}`;
  return d.allowed.length ? `405 ${d.allowed.join(', ')}` : '404';
}

describe('the emulator dispatcher: method and path → named handler', () => {
  it.each([
    // cloud
    ['cloud', 'GET /api/queue', 'getQueue'],
    ['cloud', 'POST /api/queue', 'postQueue'],
    ['cloud', 'PUT /api/queue', '405 GET, POST'],
    ['cloud', 'POST /api/prompt', 'postPrompt'],
    ['cloud', 'GET /api/prompt', '405 POST'],
    ['cloud', 'GET /api/jobs', 'getJobs'],
    ['cloud', 'GET /api/jobs/p-1', 'getJob {"promptId":"p-1"}'],
    ['cloud', 'GET /api/job/p%2F1/status', 'getJobStatus {"promptId":"p/1"}'],
    ['cloud', 'POST /api/jobs/cancel', 'postJobsCancel'],
    ['cloud', 'POST /api/jobs/p-1/cancel', 'postJobCancel {"promptId":"p-1"}'],
    ['cloud', 'HEAD /api/view', 'getView'],
    ['cloud', 'GET /signed/tok', 'getSigned {"token":"tok"}'],
    ['cloud', 'GET /history/p-1', '404'],
    ['cloud', 'GET /queue', '404'],
    ['cloud', 'GET /api/nothing', '404'],
    ['cloud', 'GET /api/jobs/', '404'],
    // the spec's cloud: no /api/jobs; the local server: history, bare aliases of the same handlers
    ['spec', 'GET /api/jobs', '404'],
    ['spec', 'POST /api/jobs/cancel', '404'],
    ['local', 'GET /history/p-1', 'getHistory {"promptId":"p-1"}'],
    ['local', 'GET /api/history/p-1', 'getHistory {"promptId":"p-1"}'],
    ['local', 'GET /queue', 'getQueue'],
    ['local', 'DELETE /prompt', '405 POST'],
    // registry (first registered wins: /nodes/search before /nodes/:nodeId)
    ['cloud', 'GET /nodes/search', 'searchNodes'],
    ['cloud', 'GET /nodes/acme-x', 'getNode {"nodeId":"acme-x"}'],
    ['cloud', 'GET /nodes', 'listNodes'],
    ['cloud', 'GET /nodes/acme-x/versions/1.0.0', 'getNodeVersion {"nodeId":"acme-x","version":"1.0.0"}'],
    ['cloud', 'POST /publishers/acme/nodes', 'postPublisherNode {"publisherId":"acme"}'],
    ['cloud', 'DELETE /publishers/acme', 'deletePublisher {"publisherId":"acme"}'],
    ['cloud', 'GET /publishers/acme', '405 DELETE'],
    ['cloud', 'GET /publishers', 'getPublishers'],
    ['cloud', 'PUT /registry-uploads/n/1.0.0/node.zip', '404'],
    // proxy
    ['cloud', 'POST /proxy/bfl/v1/ai/image-relight', 'postImageRelight {"vendor":"bfl"}'],
    ['cloud', 'GET /proxy/bfl/v1/ai/image-relight/t-1', 'getImageRelight {"vendor":"bfl","task_id":"t-1"}'],
    ['cloud', 'GET /proxy/bfl/v1/ai/skin-enhancer/t-1', 'getSkinEnhancer {"vendor":"bfl","task_id":"t-1"}'],
    ['cloud', 'GET /proxy/bfl/v1/ai/image-relight', '405 POST'],
    ['cloud', 'GET /proxy/results/t-1/0.png', 'getResult {"taskId":"t-1","file":"0.png"}'],
    // v2 (the event stream, then the job routes)
    ['v2', 'POST /api/v2/jobs', 'postJobs'],
    ['v2', 'GET /api/v2/jobs/j-1/events', 'getEvents {"id":"j-1"}'],
    ['v2', 'GET /api/v2/jobs/j-1/logs', 'getLogs {"id":"j-1"}'],
    ['v2', 'DELETE /api/v2/jobs/j-1', '405 GET'],
    ['v2', 'HEAD /api/v2/assets/by-hash/blake3:00', 'headByHash {"hash":"blake3:00"}'],
    ['v2', 'DELETE /api/v2/assets/a-1', 'deleteAsset {"id":"a-1"}'],
    ['v2', 'GET /api/v2/health', 'getHealth'],
    ['v2', 'GET /api/object_info', 'getObjectInfo'],
    ['v2', 'GET /api/queue', '404'],
    ['v2-real', 'GET /api/v2/jobs/j-1/logs', 'getLogs {"id":"j-1"}'],
  ] as const)('%s: %s → %s', (personality, request, expected) => {
    expect(dispatch(mainTable(personality), request)).toBe(expected);
  });

  it("the result host's table: the signed upload, v2's signed content; nothing of the main server", () => {
    const results = new RouteTable([...uploadRoutes(new RegistryState()), ...signedContentRoutes({} as V2State)]);
    expect(dispatch(results, 'PUT /registry-uploads/n/1.0.0/node.zip')).toBe('putUpload {"nodeId":"n","version":"1.0.0"}');
    expect(dispatch(results, 'GET /registry-uploads/n/1.0.0/node.zip')).toBe('405 PUT');
    expect(dispatch(results, 'GET /v2/signed/tok')).toBe('getSigned {"token":"tok"}');
    expect(dispatch(results, 'GET /api/queue')).toBe('404');
  });

  it('a row: its method and pattern, its named handler bound to the state, its options; `when` leaves it out', async () => {
    const seen: string[] = [];
    function getThing(state: { name: string }, ctx: { params: Readonly<Record<string, string>> }): void {
      seen.push(`${state.name}:${ctx.params.id}`);
    }
    const routes: Route[] = routeTable({ name: 's' }, [
      ['GET /things/:id', getThing, { bodyLimit: 5 }],
      ['POST /things', getThing, { when: () => false }],
    ]);
    expect(routes.map((r) => [r.method, r.path, r.name, r.bodyLimit])).toEqual([['GET', '/things/:id', 'getThing', 5]]);
    await routes[0]!.handler({ params: { id: '7' } } as never);
    expect(seen).toEqual(['s:7']);
  });

  it('a parameter matches one non-empty segment; a pattern matches whole paths only', () => {
    const table = new RouteTable(routeTable(null, [['GET /a/:x', function getA() {}], ['GET /a/:x/b', function getAB() {}]]));
    expect(dispatch(table, 'GET /a/1')).toBe('getA {"x":"1"}');
    expect(dispatch(table, 'GET /a/1/b')).toBe('getAB {"x":"1"}');
    expect(dispatch(table, 'GET /a/')).toBe('404');
    expect(dispatch(table, 'GET /a/1/b/c')).toBe('404');
    expect(dispatch(table, 'GET /a')).toBe('404');
  });
});

describe('the router answers what the dispatcher says', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const p = PERSONALITIES.spec;
    const router = new Router(new Faults()).add(mainTable('spec').routes).explainMissing(missingRouteHint(p));
    server = createServer(router.listener);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('405 with Allow (the path\'s methods and OPTIONS), 404 naming the personalities that serve a route', async () => {
    const wrong = await fetch(`${url}/api/queue`, { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, POST, OPTIONS');
    expect(await wrong.json()).toEqual({ error: 'method_not_allowed', message: 'Method PUT is not allowed on /api/queue' });
    const missing = await fetch(`${url}/api/jobs`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).message).toContain("the 'spec' personality does not serve this route");
    const nowhere = await fetch(`${url}/api/nothing`);
    expect(await nowhere.json()).toEqual({ error: 'not_found', message: 'No route for GET /api/nothing' });
  });
});
