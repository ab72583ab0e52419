// Unknown options are refused before any request, naming the closest option (issue 32, item 5): in
// plain JavaScript a misspelt option was ignored in silence (`apikey` then a bare 401, `baseURL` then
// "baseUrl is required"). Every constructor and every method's options here, no request made (msw sees
// none); run() and one method per client family against the emulator over loopback in the integration files.
import { describe, expect, it } from 'vitest';
import { CloudClient, CloudPool, InvalidArgumentError, ProxyClient, RegistryClient, validateWorkflow, Workflow } from '../src/index.ts';
import { startEmulator } from '../src/emulator/index.ts';
import { generateTypes } from '../src/workflow/codegen.ts';
import { JobQueue, QueueWorker } from '../src/queue/index.ts';
import { interceptHttp } from './helpers/msw.ts';

const { seen } = interceptHttp();

const thrown = (f: () => unknown): InvalidArgumentError => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return err as InvalidArgumentError;
  }
  throw new Error('did not throw');
};

describe('unknown options (issue 32)', () => {
  it.each([
    ['CloudClient apikey', () => new CloudClient({ baseUrl: 'https://cloud.test', apikey: 'k' } as object), 'apikey', 'apiKey'],
    ['CloudClient baseURL', () => new CloudClient({ baseURL: 'https://cloud.test' } as object), 'baseURL', 'baseUrl'],
    ['RegistryClient tokn', () => new RegistryClient({ tokn: 't' } as object), 'tokn', 'token'],
    ['ProxyClient vender', () => new ProxyClient({ baseUrl: 'https://proxy.test', vender: 'x' } as object), 'vender', 'vendor'],
    ['a nested retry option', () => new RegistryClient({ baseUrl: 'https://r.test', retry: { limt: 1 } } as object), 'retry.limt', 'limit'],
    ['CloudPool maxConcurent', () => new CloudPool([{ baseUrl: 'http://127.0.0.1:1', maxConcurent: 1 } as object]), 'maxConcurent', 'maxConcurrent'],
    ['CloudPool options', () => new CloudPool([{ baseUrl: 'http://127.0.0.1:1' }], { logLevl: 'off' } as object), 'logLevl', 'logLevel'],
  ])('%s: InvalidArgumentError naming the closest option, before any request', (_, make, field, near) => {
    const err = thrown(make);
    expect(err.field).toBe(field);
    expect(err.message).toContain(`(did you mean "${near}"?)`);
    expect(seen).toHaveLength(0);
  });

  it('an option with no near name lists the known ones', () => {
    expect(thrown(() => new RegistryClient({ zzzzzz: 1 } as object)).message).toMatch(/^zzzzzz: unknown option of RegistryClient; the options are baseUrl, .*token/);
  });

  it('method options: run, submit, waitForJob refuse a typo before any request', async () => {
    const cloud = new CloudClient({ baseUrl: 'https://cloud.test', apiKey: 'k' });
    const wf = { '1': { class_type: 'SaveImage', inputs: {} } };
    await expect(cloud.run(wf, { onProgres: () => {} } as object)).rejects.toThrow(/onProgres: unknown option of run\(\) \(did you mean "onProgress"\?\)/);
    await expect(cloud.run(wf, { timout: 5 } as object)).rejects.toThrow(/timout: .*did you mean "timeout"/);
    await expect(cloud.submit(wf, { promptID: 'x' } as object)).rejects.toThrow(/promptID: .*did you mean "promptId"/);
    await expect(cloud.waitForJob('p', { polInterval: 5 } as object)).rejects.toThrow(/polInterval: .*did you mean "pollInterval"/);
    expect(seen).toHaveLength(0);
  });

  it('startEmulator refuses a typo', async () => {
    await expect(startEmulator({ personalty: 'spec' } as object)).rejects.toThrow(/personalty: .*did you mean "personality"/);
  });

  // Every public method that takes options, and every remaining constructor (issue 32, item 5, finished):
  // a misspelt key is refused with the closest name, synchronously or as the rejection, before any request.
  const cloud = () => new CloudClient({ baseUrl: 'https://cloud.test', apiKey: 'k' });
  const registry = () => new RegistryClient({ baseUrl: 'https://registry.test', token: 't' });
  const proxy = () => new ProxyClient({ baseUrl: 'https://proxy.test', token: 't' });
  const wf = { '1': { class_type: 'SaveImage', inputs: {} } };
  const ref = { filename: 'a.png', subfolder: '', type: 'output' as const };
  const blob = () => new Blob(['x']);
  const relight = { image: 'https://example.test/in.jpg' };
  const redis = 'redis://127.0.0.1:1';
  const o = (x: object) => x as any;

  const refused = async (f: () => unknown): Promise<InvalidArgumentError> => {
    let err: unknown;
    try {
      await f();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return err as InvalidArgumentError;
  };

  it.each<[string, () => unknown, string, string]>([
    // CloudClient
    ['getObjectInfo()', () => cloud().getObjectInfo(o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['validateWorkflow()', () => cloud().validateWorkflow(wf, o({ refrsh: true })), 'refrsh', 'refresh'],
    ['uploadImage()', () => cloud().uploadImage(blob(), o({ overwite: true })), 'overwite', 'overwrite'],
    ['uploadMask()', () => cloud().uploadMask(blob(), o({ originalRef: ref, filenam: 'm.png' })), 'filenam', 'filename'],
    ['getJobStatus()', () => cloud().getJobStatus('p', o({ singal: undefined })), 'singal', 'signal'],
    ['getJob()', () => cloud().getJob('p', o({ headres: {} })), 'headres', 'headers'],
    ['listJobs()', () => cloud().listJobs({}, o({ retyr: 1 })), 'retyr', 'retry'],
    ['getQueue()', () => cloud().getQueue(o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['cancel()', () => cloud().cancel('p', o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['interrupt()', () => cloud().interrupt(o({ promptID: 'p' })), 'promptID', 'promptId'],
    ['stopJob()', () => cloud().stopJob('p', o({ confirmWithn: 5 })), 'confirmWithn', 'confirmWithin'],
    ['download()', () => cloud().download(ref, o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['downloadToFile()', () => cloud().downloadToFile(ref, '/nonexistent/out.png', o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['connect()', () => cloud().connect(o({ idleTimout: 5 })), 'idleTimout', 'idleTimeout'],
    ['connect() reconnect', () => cloud().connect(o({ reconnect: { maxAtempts: 1 } })), 'reconnect.maxAtempts', 'maxAttempts'],
    ['CloudClient hooks', () => new CloudClient(o({ baseUrl: 'https://cloud.test', hooks: { beforeReqest: [] } })), 'hooks.beforeReqest', 'beforeRequest'],
    // RegistryClient
    ['searchNodes()', () => registry().searchNodes({}, o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['listPublisherNodes()', () => registry().listPublisherNodes('pub', {}, o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['deletePublisher()', () => registry().deletePublisher('pub', o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['listPublishers()', () => registry().listPublishers(o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['getNode()', () => registry().getNode('n', o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['listNodeVersions()', () => registry().listNodeVersions('n', o({ statuss: ['NodeVersionStatusActive'] })), 'statuss', 'statuses'],
    ['getNodeVersion()', () => registry().getNodeVersion('n', '1.0.0', o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['getNodeForClass()', () => registry().getNodeForClass('KSampler', o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['listNodes()', () => registry().listNodes({}, o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['getNodes()', () => registry().getNodes(['n'], o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['bulkNodeVersions()', () => registry().bulkNodeVersions([{ node_id: 'n', version: '1.0.0' }], o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['recordInstall()', () => registry().recordInstall('n', o({ verison: '1.0.0' })), 'verison', 'version'],
    ['uploadNodeVersionArchive()', () => registry().uploadNodeVersionArchive('https://storage.test/u', new Uint8Array(1), o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['findMissingPacks()', () => registry().findMissingPacks(wf, o({ objectinfo: {} })), 'objectinfo', 'objectInfo'],
    // ProxyClient
    ['relightImage()', () => proxy().relightImage(relight, o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['enhanceSkinCreative()', () => proxy().enhanceSkinCreative(relight, o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['relightImageAndWait()', () => proxy().relightImageAndWait(relight, o({ onStarterd: () => {} })), 'onStarterd', 'onStarted'],
    ['enhanceSkinCreativeAndWait()', () => proxy().enhanceSkinCreativeAndWait(relight, o({ polInterval: 5 })), 'polInterval', 'pollInterval'],
    ['getTask()', () => proxy().getTask('image-relight', 't', o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['waitForTask()', () => proxy().waitForTask('image-relight', 't', o({ notFoundGrase: 5 })), 'notFoundGrase', 'notFoundGrace'],
    ['downloadResult()', () => proxy().downloadResult('https://results.test/r.png', o({ tiemout: 5 })), 'tiemout', 'timeout'],
    ['downloadResultToFile()', () => proxy().downloadResultToFile('https://results.test/r.png', '/nonexistent/r.png', o({ singal: undefined })), 'singal', 'signal'],
    ['confirmNotification()', () => proxy().confirmNotification({ task_id: 't', status: 'COMPLETED' }, o({ operaton: 'image-relight' })), 'operaton', 'operation'],
    ['request()', () => proxy().request(o({ method: 'GET', path: '/v1/x', optons: {} })), 'optons', 'options'],
    ['request() options', () => proxy().request({ method: 'GET', path: '/v1/x', options: o({ tiemout: 5 }) }), 'options.tiemout', 'timeout'],
    // The builder, validation and codegen
    ['Workflow.fromEditor()', () => Workflow.fromEditor({ nodes: [], links: [] }, {}, o({ widgetValue: 'editor' })), 'options.widgetValue', 'widgetValues'],
    ['Workflow.add()', () => new Workflow().add('SaveImage', {}, o({ tite: 'out' })), 'options.tite', 'title'],
    ['validateWorkflow', () => validateWorkflow(wf, {}, o({ everyNod: true })), 'options.everyNod', 'everyNode'],
    ['generateTypes()', () => generateTypes({}, o({ typename: 'Nodes' })), 'options.typename', 'typeName'],
    // The queue: refused before Redis is touched (nothing listens on port 1)
    ['JobQueue', () => new JobQueue(o({ connection: redis, keepFinshed: 1000 })), 'keepFinshed', 'keepFinished'],
    ['JobQueue.add()', () => new JobQueue({ connection: redis }).add(wf, o({ jobID: 'order-1' })), 'jobID', 'jobId'],
    ['QueueWorker', () => new QueueWorker(o({ connection: redis, servers: [{ baseUrl: 'http://127.0.0.1:1' }], concurency: 1 })), 'concurency', 'concurrency'],
    // The emulator's nested options
    ['startEmulator() cloud', () => startEmulator(o({ cloud: { stepsMs: 1 } })), 'cloud.stepsMs', 'stepMs'],
    ['startEmulator() proxy', () => startEmulator(o({ proxy: { notFoundPols: 1 } })), 'proxy.notFoundPols', 'notFoundPolls'],
    ['startEmulator() faults', () => startEmulator(o({ faults: { latncyMs: 1 } })), 'faults.latncyMs', 'latencyMs'],
  ])('%s: a misspelt option is refused, naming the closest, before any request', async (_, call, field, near) => {
    const err = await refused(call);
    expect(err.field).toBe(field);
    expect(err.message).toContain(`(did you mean "${near}"?)`);
    expect(seen).toHaveLength(0);
  });

  it('the message names the method', async () => {
    expect((await refused(() => cloud().getJob('p', o({ tiemout: 5 })))).message).toBe('tiemout: unknown option of getJob() (did you mean "timeout"?)');
    expect((await refused(() => proxy().request({ method: 'GET', path: '/v1/x', options: o({ tiemout: 5 }) }))).message).toBe('options.tiemout: unknown option of request() (did you mean "timeout"?)');
  });

  it('calls made on behalf of a wider options object do not trip: waitForJob polls, submit validates, AndWait waits', async () => {
    // Each refuses later for its own reason (nothing answers here), not for an option it passed on.
    const c = cloud();
    const aborted = AbortSignal.abort();
    await expect(c.waitForJob('p', { pollInterval: 5, signal: aborted })).rejects.not.toBeInstanceOf(InvalidArgumentError);
    await expect(c.submit(wf, { validate: true, promptId: 'p', signal: aborted })).rejects.not.toBeInstanceOf(InvalidArgumentError);
    await expect(proxy().relightImageAndWait(relight, { onStarted: () => {}, pollInterval: 5, signal: aborted })).rejects.not.toBeInstanceOf(InvalidArgumentError);
  });
});
