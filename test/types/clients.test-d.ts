// Type tests: what each method returns and accepts, as users see it.
import { describe, expectTypeOf, it } from 'vitest';
import {
  CloudClient,
  type Page,
  type PagePromise,
  ProxyClient,
  RegistryClient,
  type APIPromise,
  type FileRef,
  type JobStatus,
  type JobStatusResult,
  type JobPhase,
  type JobRecord,
  type JobPage,
  type OutputFile,
  type Node,
  type NodeStatus,
  type Publisher,
  type Task,
  type TaskRecord,
  type UploadResponse,
  type WithResponse,
} from '../../src/index.ts';

const registry = new RegistryClient({ baseUrl: 'http://x' });
const proxy = new ProxyClient({ baseUrl: 'http://x' });
const cloud = new CloudClient({ baseUrl: 'http://x' });

describe('RegistryClient', () => {
  it('returns pages and nodes', () => {
    expectTypeOf(registry.searchNodes()).toEqualTypeOf<PagePromise<Page<Node>>>();
    expectTypeOf(registry.searchNodes()).resolves.toEqualTypeOf<Page<Node>>();
    expectTypeOf(registry.listPublisherNodes('p')).toEqualTypeOf<PagePromise<Page<Node>>>();
    expectTypeOf(registry.createNode('p', { id: 'n' })).toEqualTypeOf<APIPromise<Node>>();
    expectTypeOf(registry.deletePublisher('p')).resolves.toBeVoid();
    expectTypeOf(registry.listPublishers()).resolves.toEqualTypeOf<Publisher[]>();
    expectTypeOf(registry.listPublishers().withResponse()).resolves.toEqualTypeOf<WithResponse<Publisher[]>>();
  });

  it('types wire fields and open enums', () => {
    expectTypeOf<Node['downloads']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Node['created_at']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<NodeStatus>().toExtend<string>();
    expectTypeOf<'NodeStatusActive'>().toExtend<NodeStatus>();
    expectTypeOf<Page<Node>['totalPages']>().toBeNumber();
  });

  it('rejects off-spec parameters at compile time', () => {
    // @ts-expect-error: not a search parameter
    void registry.searchNodes({ sort: 'stars' });
    // @ts-expect-error: page is a number
    void registry.searchNodes({ page: '2' });
    // @ts-expect-error: nested latest_version carries no status in a create request
    void registry.createNode('p', { id: 'n', latest_version: { status: 'NodeVersionStatusActive' } });
  });
});

describe('ProxyClient', () => {
  it('resolves with the task (the data of the wire task record)', () => {
    expectTypeOf(proxy.relightImage({ image: 'x' })).resolves.toEqualTypeOf<Task>();
    expectTypeOf(proxy.enhanceSkinCreative({ image: new Uint8Array() })).resolves.toEqualTypeOf<Task>();
    expectTypeOf(proxy.relightImage({ image: 'x' }).withResponse()).resolves.toEqualTypeOf<WithResponse<Task>>();
    expectTypeOf(proxy.relightImage({ image: 'x' })).resolves.toHaveProperty('task_id').toBeString();
    expectTypeOf<TaskRecord['data']>().toEqualTypeOf<Task>();
    // @ts-expect-error: style is one of the presets
    void proxy.relightImage({ image: 'x', style: 'neon' });
  });
});

describe('CloudClient', () => {
  it('returns the REST shapes', () => {
    expectTypeOf(cloud.uploadImage(new Blob())).resolves.toEqualTypeOf<UploadResponse>();
    expectTypeOf(cloud.submit({ '1': { inputs: {} } })).resolves.toHaveProperty('prompt_id').toBeString();
    expectTypeOf(cloud.getJobStatus('p')).resolves.toEqualTypeOf<JobStatusResult>();
    expectTypeOf(cloud.getJobStatus('p')).resolves.toHaveProperty('phase').toEqualTypeOf<JobPhase>();
    expectTypeOf(cloud.getJob('p')).resolves.toEqualTypeOf<JobRecord>();
    expectTypeOf(cloud.waitForJob('p')).resolves.toEqualTypeOf<JobRecord>();
    expectTypeOf(cloud.listJobs()).toEqualTypeOf<PagePromise<JobPage>>();
    expectTypeOf<JobPhase>().toEqualTypeOf<'pending' | 'running' | 'completed' | 'failed' | 'cancelled'>();
    expectTypeOf<JobStatus['status']>().toExtend<string>();
    expectTypeOf(cloud.download({ filename: 'x' })).resolves.toEqualTypeOf<Response>();
    expectTypeOf(cloud.run({})).resolves.toHaveProperty('files').toEqualTypeOf<OutputFile[]>();
    // A job's file goes to download() as it is.
    expectTypeOf<OutputFile>().toExtend<FileRef>();
  });

  it("takes listJobs' documented values only", () => {
    cloud.listJobs({ status: 'failed', sort_by: 'execution_time', sort_order: 'asc', output_type: 'video' });
    cloud.listJobs({ status: ['failed', 'cancelled'], sort_by: 'created_at' });
    type Status = NonNullable<Parameters<typeof cloud.listJobs>[0]>['status'];
    expectTypeOf<Status>().toEqualTypeOf<JobListStatus | JobListStatus[] | undefined>();
    // @ts-expect-error not a job status
    cloud.listJobs({ status: 'done' });
    // @ts-expect-error not a job status
    cloud.listJobs({ status: ['failed', 'done'] });
    // @ts-expect-error not a sort key
    cloud.listJobs({ sort_by: 'name' });
    // @ts-expect-error not an output type
    cloud.listJobs({ output_type: 'text' });
    // @ts-expect-error unknown key
    cloud.listJobs({ colour: 'red' });
  });
});

type JobListStatus = 'pending' | 'in_progress' | 'completed' | 'failed' | 'cancelled';
