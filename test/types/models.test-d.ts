// Type tests for the models: no catch-all index signature (a misspelt field is
// a compile error), required where the spec and the recordings say so, open
// enums, and unknown fields read only on purpose. (Unknown fields are still
// kept at runtime: test/schemas/models.test.ts.)
import { describe, expectTypeOf, it } from 'vitest';
import {
  CloudClient,
  SubmissionError,
  decodeFrame,
  isImageFrame,
  ProxyClient,
  RegistryClient,
  parseTaskNotification,
  type EventDataMap,
  type ExecutedData,
  type FileRef,
  type JobList,
  type JobPagination,
  type JobPhase,
  type JobRecord,
  type JobRecordBody,
  type JobStatus,
  type JobStatusResult,
  type JobSummary,
  type NodeError,
  type NodeErrors,
  type NodeOutputs,
  type Node,
  type NodePage,
  type NodeVersion,
  type ObjectInfo,
  type PageBody,
  type ProgressData,
  type Publisher,
  type StatusData,
  type SubmissionErrorBody,
  type SubmissionErrorDetail,
  type SubmissionResponse,
  type Task,
  type TaskNotification,
  type TaskRecord,
  type TaskStatus,
  type UploadResponse,
  type WorkflowJSON,
} from '../../src/index.ts';

declare const registry: RegistryClient;
declare const proxy: ProxyClient;
declare const cloud: CloudClient;
declare const id: string;

describe('the typos of issue 8 do not compile', () => {
  it('node.naem, node.githubStars', async () => {
    const node = (await registry.searchNodes()).nodes[0]!;
    // @ts-expect-error: no such field (name)
    void node.naem;
    // @ts-expect-error: wire names are kept (github_stars), no camelCase twin
    void node.githubStars;
    expectTypeOf(node.name).toEqualTypeOf<string | undefined>();
    expectTypeOf(node.github_stars).toEqualTypeOf<number | undefined>();
  });

  it('(await cloud.waitForJob(id)).outptus', async () => {
    const record = await cloud.waitForJob(id);
    // @ts-expect-error: no such field (outputs)
    void record.outptus;
    // @ts-expect-error: the same on the raw record and on the status
    void (await cloud.getJob(id)).outptus;
    // @ts-expect-error: no such field (status)
    void (await cloud.getJobStatus(id)).statsu;
    expectTypeOf(record.outputs).toEqualTypeOf<Record<string, NodeOutputs> | null | undefined>();
  });

  it('nested models and envelopes too', async () => {
    const node = await registry.createNode('p', { id: 'n' });
    // @ts-expect-error: no such field (version)
    void node.latest_version?.verison;
    // @ts-expect-error: no such field (website)
    void node.publisher?.webiste;
    const page = await registry.searchNodes();
    // @ts-expect-error: the page body has no catch-all either
    void page.body.cursor;
    const task = await proxy.relightImage({ image: 'x' });
    // @ts-expect-error: no such field (generated)
    void task.genrated;
    const list = (await cloud.listJobs()).body;
    // @ts-expect-error: no such field (has_more)
    void list.pagination.hasMore;
    const upload = await cloud.uploadImage(new Blob());
    // @ts-expect-error: no such field (name)
    void upload.filename;
  });

  it('object literals of a model reject unknown keys', () => {
    // @ts-expect-error: excess property
    const ref: FileRef = { filename: 'a.png', subfloder: '' };
    void ref;
    // @ts-expect-error: excess property in a workflow node (inputs)
    const wf: WorkflowJSON = { '1': { class_type: 'LoadImage', input: {} } };
    void wf;
    // @ts-expect-error: excess property in a create request
    void registry.createNode('p', { id: 'n', naem: 'x' });
  });

  it('socket event data', () => {
    type Progress = EventDataMap['progress'];
    // @ts-expect-error: no such field (max)
    expectTypeOf<Progress>().toHaveProperty('maximum');
    expectTypeOf<Progress>().toEqualTypeOf<ProgressData>();
    // @ts-expect-error: nested queue status has no catch-all
    expectTypeOf<StatusData['status']['exec_info']>().toHaveProperty('queue_remaning');
    expectTypeOf<ExecutedData['output']>().toEqualTypeOf<NodeOutputs | null>();
  });
});

describe('fields are typed precisely', () => {
  it('required where the spec and the recordings agree, optional elsewhere', () => {
    expectTypeOf<UploadResponse>().toEqualTypeOf<{ name: string; subfolder?: string; type?: string }>();
    expectTypeOf<FileRef['filename']>().toBeString();
    expectTypeOf<JobStatus['status']>().toExtend<string>();
    expectTypeOf<JobSummary['id']>().toBeString();
    expectTypeOf<JobList['jobs']>().toEqualTypeOf<JobSummary[]>();
    expectTypeOf<JobList['pagination']>().toEqualTypeOf<JobPagination>();
    expectTypeOf<JobPagination['has_more']>().toBeBoolean();
    expectTypeOf<NonNullable<ObjectInfo[string]['input']>['required']>().toEqualTypeOf<Record<string, unknown> | undefined>();
    expectTypeOf<NodePage['totalPages']>().toBeNumber();
    expectTypeOf<PageBody<Node>['nodes']>().toEqualTypeOf<Node[]>();
    expectTypeOf<Task['task_id']>().toBeString();
    expectTypeOf<Task['generated']>().toEqualTypeOf<string[] | undefined>();
    // The registry document marks no resource field as required.
    expectTypeOf<Node['id']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Node['latest_version']>().toEqualTypeOf<NodeVersion | undefined>();
    expectTypeOf<Node['publisher']>().toEqualTypeOf<Publisher | undefined>();
    // What the spec leaves open stays optional.
    expectTypeOf<SubmissionResponse['prompt_id']>().toEqualTypeOf<string | undefined>();
  });

  it('JobRecord and JobStatusResult are the wire body plus phase, nothing else', () => {
    expectTypeOf<JobRecord>().toExtend<JobRecordBody>();
    expectTypeOf<JobRecord['phase']>().toEqualTypeOf<JobPhase>();
    expectTypeOf<JobStatusResult>().toExtend<JobStatus>();
    expectTypeOf<keyof JobRecord>().toEqualTypeOf<keyof JobRecordBody | 'phase'>();
    expectTypeOf<keyof JobStatusResult>().toEqualTypeOf<keyof JobStatus | 'phase'>();
    expectTypeOf<string>().not.toExtend<keyof JobRecord>();
  });

  it('no model has a string index signature', () => {
    expectTypeOf<string>().not.toExtend<keyof Node>();
    expectTypeOf<string>().not.toExtend<keyof NodeVersion>();
    expectTypeOf<string>().not.toExtend<keyof Publisher>();
    expectTypeOf<string>().not.toExtend<keyof Task>();
    expectTypeOf<string>().not.toExtend<keyof TaskRecord>();
    expectTypeOf<string>().not.toExtend<keyof TaskNotification>();
    expectTypeOf<string>().not.toExtend<keyof JobSummary>();
    expectTypeOf<string>().not.toExtend<keyof JobStatus>();
    expectTypeOf<string>().not.toExtend<keyof NodeOutputs>();
    expectTypeOf<string>().not.toExtend<keyof UploadResponse>();
    expectTypeOf<string>().not.toExtend<keyof PageBody<Node>>();
    expectTypeOf<string>().not.toExtend<keyof EventDataMap[keyof EventDataMap]>();
  });

  it('enums stay open, with the known values first', () => {
    expectTypeOf<'IN_PROGRESS'>().toExtend<TaskStatus>();
    expectTypeOf<'COMPLETED'>().toExtend<Task['status']>();
    expectTypeOf<'FAILED'>().toExtend<NonNullable<TaskNotification['status']>>();
    expectTypeOf<'SOMETHING_NEW'>().toExtend<TaskStatus>();
    expectTypeOf(parseTaskNotification('{}')).toEqualTypeOf<TaskNotification>();
  });

  it('types the submission error body', () => {
    expectTypeOf<SubmissionErrorBody['error']>().toEqualTypeOf<SubmissionErrorDetail | string>();
    expectTypeOf<SubmissionErrorBody['node_errors']>().toEqualTypeOf<NodeErrors | undefined>();
    expectTypeOf<NodeErrors[string]>().toEqualTypeOf<NodeError>();
    expectTypeOf<NodeError['errors'][number]>().toEqualTypeOf<SubmissionErrorDetail>();
    expectTypeOf<SubmissionErrorDetail['message']>().toBeString();
    expectTypeOf<SubmissionErrorDetail['extra_info']>().toEqualTypeOf<Record<string, unknown> | undefined>();
  });
});

describe('unknown fields are read on purpose', () => {
  it('with `in` narrowing or a cast, typed unknown', async () => {
    const node = (await registry.searchNodes()).nodes[0]!;
    if ('new_field' in node) expectTypeOf(node.new_field).toBeUnknown();
    expectTypeOf((node as Record<string, unknown>).new_field).toBeUnknown();
    const record = await cloud.getJob(id);
    if ('priority' in record) expectTypeOf(record.priority).toBeUnknown();
  });
});

describe('binary frames', () => {
  it('frame.image goes straight into a Blob', () => {
    const frame = decodeFrame(new ArrayBuffer(8));
    if (isImageFrame(frame)) {
      expectTypeOf(frame.image).toEqualTypeOf<Uint8Array<ArrayBuffer>>();
      expectTypeOf(new Blob([frame.image])).toEqualTypeOf<Blob>();
    }
    if (frame.type === 'preview_image_with_metadata') {
      // @ts-expect-error a typo in the metadata is a compile error
      void frame.metadata.promt_id;
    }
  });
});

describe('SubmissionError', () => {
  it('types node_errors', () => {
    expectTypeOf<SubmissionError['nodeErrors']>().toEqualTypeOf<NodeErrors | undefined>();
    expectTypeOf<NonNullable<SubmissionError['nodeErrors']>[string]['errors'][number]['message']>().toEqualTypeOf<string>();
  });
});
