// The public surface, pinned: every runtime value each entry exports. A new export
// (or a lost one) fails here, so it is a decision, not an accident. Types are not
// listed (they cost nothing at runtime); their names are checked by test/types.
import { describe, expect, it } from 'vitest';
import * as root from '../src/index.ts';
import * as emulator from '../src/emulator/index.ts';
import * as schemas from '../src/schemas/index.ts';
import * as codegen from '../src/workflow/codegen.ts';

const ROOT = [
  'APIConnectionError',
  'APIError',
  'APIPromise',
  'APITimeoutError',
  'APIUserAbortError',
  'AuthenticationError',
  'BadRequestError',
  'CloudClient',
  'ConflictError',
  'DownloadError',
  'ExecutionError',
  'FrameDecodeError',
  'InsufficientCreditsError',
  'InternalServerError',
  'InvalidArgumentError',
  'JobCancelledError',
  'JobNotStoppedError',
  'JobExpiredError',
  'JobExistsError',
  'UnsupportedError',
  'JobTimeoutError',
  'ServerLostError',
  'SocketRefusedError',
  'PlacementError',
  'PoolClosedError',
  'CloudPool',
  'MissingCredentialsError',
  'NodeVersionUploadError',
  'NotFoundError',
  'PermissionDeniedError',
  'PlatformUIError',
  'ProxyClient',
  'RateLimitError',
  'RegistryClient',
  'ResponseValidationError',
  'SubmissionError',
  'SubscriptionInactiveError',
  'TaskFailedError',
  'TaskNotFoundError',
  'TaskTimeoutError',
  'Workflow',
  'WorkflowValidationError',
  'decodeFrame',
  'decodeFrameAsync',
  'encodeFrame',
  'filesOf',
  'isFinalPhase',
  'isImageFrame',
  'isMessage',
  'jobPhase',
  'parseMessage',
  'parseTaskNotification',
  'validateWorkflow',
];

const EMULATOR = [
  'ACCELERATOR_VALUES',
  'DEFAULT_API_KEYS',
  'DEFAULT_TOKENS',
  'EMULATOR_API_KEY',
  'EMULATOR_PAT',
  'EMULATOR_TOKEN',
  'EXCEPTION_TYPES',
  'LOCAL_LANE',
  'MAX_PAGE_SIZE',
  'makePng',
  'OS_VALUES',
  'PERSONALITIES',
  'SEED_FACTS',
  'startEmulator',
];

describe('public surface', () => {
  it('the root entry exports the clients, the errors and the realtime helpers, nothing internal', () => {
    expect(Object.keys(root).sort()).toEqual([...ROOT].sort());
  });

  it('the emulator entry exports what a user of the emulator needs, no server plumbing', () => {
    expect(Object.keys(emulator).sort()).toEqual([...EMULATOR].sort());
  });

  it('the schemas entry holds every runtime schema and value list, and nothing else', () => {
    const keys = Object.keys(schemas);
    // Schemas are zod types; lists are frozen-at-compile-time arrays or records of them.
    for (const k of keys) {
      const v = (schemas as Record<string, unknown>)[k];
      const isSchema = typeof v === 'object' && v !== null && '_zod' in v;
      const isList = Array.isArray(v) || (typeof v === 'object' && v !== null && Object.values(v).every((x) => typeof x === 'object' && x !== null && '_zod' in x));
      expect([k, isSchema || isList]).toEqual([k, true]);
    }
    for (const k of ['Node', 'NodeVersion', 'Publisher', 'Task', 'FileRef', 'JobRecordBody', 'JobStatus', 'RELIGHT_STYLES', 'JOB_STATUSES', 'EVENT_TYPES']) expect(keys).toContain(k);
    // None of them at the root: importing `Node` from the root never shadows the DOM's `Node`.
    // `Workflow` there is the class that edits and builds workflows (the schema's type is `WorkflowJSON` there).
    for (const k of keys) if (k !== 'Workflow') expect(Object.keys(root)).not.toContain(k);
    expect(root.Workflow).not.toBe((schemas as Record<string, unknown>).Workflow);
  });

  it('the codegen entry exports the node-types generator alone', () => {
    expect(Object.keys(codegen)).toEqual(['generateTypes']);
  });

  it('clients hold no reachable transport or credential', () => {
    const client = new root.CloudClient({ baseUrl: 'https://cloud.test', apiKey: 'k_SECRET' });
    expect(Object.keys(client)).not.toContain('transport');
    expect('transport' in client).toBe(false);
    expect(JSON.stringify(client)).not.toContain('k_SECRET');
  });
});
