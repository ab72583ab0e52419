/**
 * Schemas of what a cloud workflow is made of (`cloud.md`): its nodes in API
 * format, the server's node definitions (`object_info`) and file references,
 * which the job, upload and event schemas (`cloud.ts`, `events.ts`) build on.
 * Loose and open as every cloud schema is (see `cloud.ts`).
 *
 * @module
 */
import * as z from 'zod/mini';
import { FILE_TYPES } from './values.ts';
import { openEnum, opt, type Checks, type Fields, type Model, type OpenEnum, type Same } from './common.ts';

/** A file reference's `type`: `input`, `output`, `temp`, or any other string. */
export type FileType = OpenEnum<typeof FILE_TYPES>;
/**
 * A file reference: `filename`, `subfolder` (usually empty), `type`. Also what
 * `download()` and `uploadMask({ originalRef })` take, so only `filename` is
 * required.
 */
export interface FileRef {
  filename: string;
  /** Usually empty (storage is flat; accepted for compatibility). */
  subfolder?: string;
  /** `input`, `output` or `temp`; other values kept. */
  type?: FileType;
}

/**
 * Outputs of one node. `images`, `video` and `audio` are checked as lists of
 * file references; every other key a server or custom node sends (`gifs`,
 * `3d`, `latents`, `text: ['…']`, `animated: [true]`, …) is kept as sent,
 * unchecked (read it with a cast). `filesOf()` finds the files under any key.
 */
export interface NodeOutputs {
  images?: FileRef[];
  video?: FileRef[];
  audio?: FileRef[];
}

/** `_meta` of a workflow node, as API-format exports carry it. */
export interface WorkflowNodeMeta {
  /** The node's title in the editor. */
  title?: string;
}

/** One node of a workflow in API format. */
export interface WorkflowNode {
  /** Input name → value (a literal, or `[nodeId, outputIndex]` for a link). */
  inputs: Record<string, unknown>;
  /** The node class (`LoadImage`, `SaveImage`, …). */
  class_type?: string;
  /** Editor metadata, ignored by the server. */
  _meta?: WorkflowNodeMeta;
}

/** A workflow in API format: nodes keyed by node id. */
export type Workflow = Record<string, WorkflowNode>;

/** `input` of a node definition: input name → input spec, per group. */
export interface NodeDefinitionInput {
  /** The required inputs (a node may have none). */
  required?: Record<string, unknown>;
  optional?: Record<string, unknown>;
  hidden?: Record<string, unknown>;
}

/** One node class of `object_info`: its `input` groups; other fields are kept at runtime. */
export interface NodeDefinition {
  input?: NodeDefinitionInput;
}

/** Response of `GET /api/object_info`: node definitions keyed by class name. */
export type ObjectInfo = Record<string, NodeDefinition>;

const fileRefShape = { filename: z.string(), subfolder: opt(z.string()), type: opt(openEnum(FILE_TYPES)) };
/** A file reference: `filename`, `subfolder` (usually empty), `type`. */
export const FileRef: Model<FileRef> = z.looseObject(fileRefShape);

const nodeOutputsShape = { images: opt(z.array(FileRef)), video: opt(z.array(FileRef)), audio: opt(z.array(FileRef)) };
/** Outputs of one node: `images`, `video`, `audio` checked as lists of file references; any other key kept unchecked. */
export const NodeOutputs: Model<NodeOutputs> = z.looseObject(nodeOutputsShape);

const workflowNodeMetaShape = { title: opt(z.string()) };
const WorkflowNodeMeta: Model<WorkflowNodeMeta> = z.looseObject(workflowNodeMetaShape);
const workflowNodeShape = { inputs: z.record(z.string(), z.unknown()), class_type: opt(z.string()), _meta: opt(WorkflowNodeMeta) };
/** One node of a workflow in API format. */
export const WorkflowNode: Model<WorkflowNode> = z.looseObject(workflowNodeShape);

/** A workflow in API format: nodes keyed by node id. */
export const Workflow = z.record(z.string(), WorkflowNode);

const nodeDefinitionInputShape = {
  required: opt(z.record(z.string(), z.unknown())),
  optional: opt(z.record(z.string(), z.unknown())),
  hidden: opt(z.record(z.string(), z.unknown())),
};
const NodeDefinitionInput: Model<NodeDefinitionInput> = z.looseObject(nodeDefinitionInputShape);
const nodeDefinitionShape = { input: opt(NodeDefinitionInput) };

/** One node class of `object_info`: `input.required` keyed by input name; the rest is kept. */
export const NodeDefinition: Model<NodeDefinition> = z.looseObject(nodeDefinitionShape);

/** Response of `GET /api/object_info`: node definitions keyed by class name. */
export const ObjectInfo = z.record(z.string(), NodeDefinition);

// Each interface above is exactly what its shape validates.
type _Exact = Checks<
  [
    Same<FileRef, Fields<typeof fileRefShape>>,
    Same<NodeOutputs, Fields<typeof nodeOutputsShape>>,
    Same<WorkflowNodeMeta, Fields<typeof workflowNodeMetaShape>>,
    Same<WorkflowNode, Fields<typeof workflowNodeShape>>,
    Same<Workflow, z.infer<typeof Workflow>>,
    Same<NodeDefinitionInput, Fields<typeof nodeDefinitionInputShape>>,
    Same<NodeDefinition, Fields<typeof nodeDefinitionShape>>,
    Same<ObjectInfo, z.infer<typeof ObjectInfo>>,
  ]
>;
