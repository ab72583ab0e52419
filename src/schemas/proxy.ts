/**
 * Schemas of the partner proxy (`registry-and-proxy.md`, endpoints 6–7, Task
 * record). Request schemas are strict about types and ranges; the rules that
 * span fields live in `proxy/rules.ts`.
 *
 * @module
 */
import * as z from 'zod/mini';
import { RELIGHT_STYLES, TASK_STATUSES } from './values.ts';
import { isImageInput } from './predicates.ts';
export { RELIGHT_STYLES, TASK_STATUSES } from './values.ts';
import { openEnum, opt, strings, type Checks, type Fields, type Model, type OpenEnum, type Same } from './common.ts';



/** A task's `status`: one of {@link TASK_STATUSES}, or any other string the provider sends. */
export type TaskStatus = OpenEnum<typeof TASK_STATUSES>;

/** An image given as a string (base64 or URL, sent as is) or as bytes (sent as base64). */
export type ImageInput = string | Blob | Uint8Array | ArrayBuffer;

// The rule's predicate and message (`[CUSTOM, is, message]`), so zod and the generated rule check alike.
const imageInput = z.custom<ImageInput>(isImageInput[1], { message: isImageInput[2] });
const percent = z.number().check(z.gte(0), z.lte(100));

/** `advanced_settings` of image-relight. Ranges are not given by the spec, so only types are checked. */
export const RelightAdvancedSettings = z.strictObject({
  blacks: opt(z.number()),
  brightness: opt(z.number()),
  contrast: opt(z.number()),
  saturation: opt(z.number()),
  whites: opt(z.number()),
  engine: opt(openEnum(['automatic'])),
  transfer_light_a: opt(openEnum(['automatic'])),
  transfer_light_b: opt(openEnum(['automatic'])),
  fixed_generation: opt(z.boolean()),
});

/** Parameters of `relightImage` (`POST /proxy/{vendor}/v1/ai/image-relight`). */
export const RelightParams = z.strictObject({
  image: imageInput,
  prompt: opt(z.string()),
  style: opt(z.enum(RELIGHT_STYLES)),
  change_background: opt(z.boolean()),
  interpolate_from_original: opt(z.boolean()),
  light_transfer_strength: opt(percent),
  preserve_details: opt(z.boolean()),
  transfer_light_from_lightmap: opt(imageInput),
  transfer_light_from_reference_image: opt(imageInput),
  webhook_url: opt(z.string()),
  advanced_settings: opt(RelightAdvancedSettings),
});

/** Parameters of `enhanceSkinCreative` (`POST /proxy/{vendor}/v1/ai/skin-enhancer/creative`). */
export const SkinEnhancerCreativeParams = z.strictObject({
  image: imageInput,
  sharpen: opt(percent),
  smart_grain: opt(percent),
  webhook_url: opt(z.string()),
});

/**
 * A task: what `relightImage()` and `enhanceSkinCreative()` resolve to (the
 * `data` of the task record). `task_id` and `status` are always sent;
 * `generated` (result references) may be absent. Other fields are not
 * specified; they are kept at runtime (read them with `'field' in task`).
 */
export interface Task {
  /** The task's id (a UUID). */
  task_id: string;
  /** `CREATED` when new, then `IN_PROGRESS`, `COMPLETED` or `FAILED`; other values kept. */
  status: TaskStatus;
  /** Result references (URLs), once the task has produced them. */
  generated?: string[];
}

/** The task record both proxy operations answer on the wire: `{ data: Task }`. */
export interface TaskRecord {
  data: Task;
}

const taskShape = { task_id: z.string(), status: openEnum(TASK_STATUSES), generated: opt(strings) };

/** The task object inside a task record. Fields beyond these three are not specified and are kept. */
export const Task: Model<Task> = z.looseObject(taskShape);

const taskRecordShape = { data: Task };

/** The task record both proxy operations answer on the wire: `{ data: Task }`. */
export const TaskRecord: Model<TaskRecord> = z.looseObject(taskRecordShape);

/**
 * A parsed task notification: the task's fields where the sender gave them.
 * Unknown fields are kept at runtime (read them with `'field' in task`).
 */
export interface TaskNotification {
  /** The task's id. */
  task_id?: string;
  /** `CREATED`, `IN_PROGRESS`, `COMPLETED`, `FAILED`, or any other value the provider sends. */
  status?: TaskStatus;
  /** Result references (URLs), once the task has produced them. */
  generated?: string[];
}

const taskNotificationShape = { task_id: opt(z.string()), status: opt(openEnum(TASK_STATUSES)), generated: opt(strings) };

/** A task notification: the task's fields where the sender gave them, unknown ones kept. */
export const TaskNotification: Model<TaskNotification> = z.looseObject(taskNotificationShape);

type _Exact = Checks<
  [Same<Task, Fields<typeof taskShape>>, Same<TaskRecord, Fields<typeof taskRecordShape>>, Same<TaskNotification, Fields<typeof taskNotificationShape>>]
>;

/** Parameters of `relightImage`. */
export type RelightParams = z.input<typeof RelightParams>;
/** `advanced_settings` of `relightImage`. */
export type RelightAdvancedSettings = z.input<typeof RelightAdvancedSettings>;
/** Parameters of `enhanceSkinCreative`. */
export type SkinEnhancerCreativeParams = z.input<typeof SkinEnhancerCreativeParams>;
/** A relight style preset. */
export type RelightStyle = (typeof RELIGHT_STYLES)[number];
