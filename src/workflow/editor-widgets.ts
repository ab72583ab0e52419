/**
 * How a node's widgets are laid out in the editor's saved `widgets_values`,
 * read from a class of `object_info` (`spec/editor-workflow.md` section 4),
 * and what each widget sends (5.5.4). The saved list has no names: only this
 * layout says which value is which.
 *
 * @module
 */
import { isObject } from '../schemas/rule.ts';

/** One slot of `widgets_values`: a widget the server receives, or a companion value it never does. */
export interface WidgetSlot {
  /** The input's name (companions: `control_after_generate`, `control_filter_list`, `upload`). */
  name: string;
  /** Whether the value goes into the API inputs (false for companions and the upload button). */
  sent: boolean;
  /** The value the editor starts the widget with (what a missing saved value becomes). */
  initial: unknown;
  /** The widget's type: `INT`, `FLOAT`, `STRING`, `BOOLEAN`, `COMBO`, `CURVE`… */
  type: string;
  /** A STRING whose `{a|b}` choices and comments the editor processes before sending. */
  dynamicPrompts?: boolean;
  /** For an upload combo whose files come from `output` or `temp`: the suffix the editor appends. */
  folder?: string;
}

/** A class input as the editor sees it at run time: a socket, or a widget (which also has a socket). */
export interface RuntimeInput {
  name: string;
  type: string;
  widget: boolean;
}

/** A class's layout: the saved slots, the legacy (pre-1.16) layout, and the run-time inputs. */
export interface ClassLayout {
  slots: WidgetSlot[];
  /** One flag per slot of the pre-1.16 layout: true for a `forceInput` placeholder (5.5.3). */
  legacy: boolean[];
  /** Sockets first, then every widget's socket, in the class's input order (2.3): what bypass chooses from (5.8). */
  runtime: RuntimeInput[];
  /** Output types, by index. */
  outputs: string[];
  /** Why the SDK cannot lay this class out as the editor does (a widget type only the editor's code knows). */
  unsupported?: string;
}

/** Types that have a widget in the editor (section 4.1), beyond the primitives. */
const WIDGET_TYPES = new Set(['INT', 'FLOAT', 'BOOLEAN', 'STRING', 'COMBO', 'MARKDOWN', 'IMAGEUPLOAD', 'COLOR', 'BOUNDING_BOX', 'CHART', 'GALLERIA', 'PAINTER', 'COMPOSITOR', 'TEXTAREA', 'CURVE', 'RANGE', 'VIDEO_EDIT', 'BOUNDING_BOXES', 'COLORS']);
/**
 * Widgets whose saved slots or sent values `object_info` does not reveal (spec section 8): previews, the
 * editor's webcam, recorder and 3D widgets, dynamic combos. Converting them would be a guess.
 */
const OPAQUE_TYPES = new Set(['IMAGECOMPARE', 'RESOLUTION_PREVIEW', 'WEBCAM', 'AUDIO_RECORD', 'LOAD_3D', 'LOAD3D_CAMERA', 'COMFY_DYNAMICCOMBO_V3']);
/** Classes that get an upload button whatever their options say (4.3). */
const UPLOAD_CLASSES = new Set(['LoadImage', 'LoadImageMask', 'LoadVideo', 'LoadAudio']);
const UPLOAD_OPTIONS = ['image_upload', 'animated_image_upload', 'video_upload'];

const cache = new WeakMap<object, Map<string, ClassLayout | null>>();

/** The layout of `classType` in `objectInfo` (parsed once per object_info and class), or `undefined` for a class it lacks. */
export function layoutOf(objectInfo: object, classType: string): ClassLayout | undefined {
  let byClass = cache.get(objectInfo);
  if (!byClass) cache.set(objectInfo, (byClass = new Map()));
  let layout = byClass.get(classType);
  if (layout === undefined) {
    const def = Object.hasOwn(objectInfo, classType) ? (objectInfo as Record<string, unknown>)[classType] : undefined;
    layout = isObject(def) ? parseLayout(classType, def) : null;
    byClass.set(classType, layout);
  }
  return layout ?? undefined;
}

interface Input {
  name: string;
  required: boolean;
  type: string;
  options: Record<string, unknown>;
  combo?: readonly unknown[];
}

function parseLayout(classType: string, def: Record<string, unknown>): ClassLayout {
  const listed: Input[] = [];
  const sections = isObject(def.input) ? def.input : {};
  for (const required of [true, false]) {
    const specs = sections[required ? 'required' : 'optional'];
    if (!isObject(specs)) continue;
    for (const [name, raw] of Object.entries(specs)) {
      const [first, second] = Array.isArray(raw) ? raw : [raw];
      const options = isObject(second) ? second : {};
      const combo = Array.isArray(first) ? first : first === 'COMBO' ? (Array.isArray(options.options) ? options.options : []) : undefined;
      const type = typeof options.widgetType === 'string' ? options.widgetType : combo ? 'COMBO' : typeof first === 'string' ? first : '*';
      listed.push({ name, required, type, options, ...(combo ? { combo } : {}) });
    }
  }
  const ordered = inputOrder(listed, def.input_order);
  const isWidget = (i: Input) => (WIDGET_TYPES.has(i.type) || i.type === 'COMBO') && i.options.forceInput !== true;
  const opaque = listed.find((i) => OPAQUE_TYPES.has(i.type) && i.options.forceInput !== true);
  const upload = listed.find((i) => i.required && i.combo && (UPLOAD_CLASSES.has(classType) || UPLOAD_OPTIONS.some((o) => i.options[o] === true)));

  const slots: WidgetSlot[] = [];
  const uploadSlot: WidgetSlot = { name: 'upload', sent: false, initial: 'image', type: 'IMAGEUPLOAD' };
  // Without input_order the upload button follows the required widgets; with it, every widget (4.3).
  const lastRequired = Object.hasOwn(def, 'input_order') ? -1 : ordered.findLastIndex((i) => i.required && isWidget(i));
  ordered.forEach((input, index) => {
    if (isWidget(input)) slots.push(...slotsOf(input));
    if (upload && index === lastRequired) slots.push(uploadSlot);
  });
  if (upload && lastRequired === -1) slots.push(uploadSlot);

  // The pre-1.16 layout: required then optional as listed, forceInput inputs holding a placeholder (5.5.3).
  // The upload button was an extra required input (`required.upload`): after every required one.
  const legacy: boolean[] = [];
  const required = listed.filter((i) => i.required).length;
  listed.forEach((input, index) => {
    if (isWidget(input) || input.options.forceInput === true) {
      legacy.push(input.options.forceInput === true);
      if (input.options.control_after_generate) legacy.push(false);
    }
    if (upload && index === required - 1) legacy.push(false);
  });

  const runtime = [...ordered.filter((i) => !isWidget(i)), ...ordered.filter(isWidget)].map((i) => ({ name: i.name, type: i.type, widget: isWidget(i) }));
  const outputs = Array.isArray(def.output) ? def.output.map((o) => (typeof o === 'string' ? o : Array.isArray(o) ? 'COMBO' : '*')) : [];
  return { slots, legacy, runtime, outputs, ...(opaque ? { unsupported: `its input ${JSON.stringify(opaque.name)} is a ${opaque.type} widget, whose saved values only the editor's own code can read` } : {}) };
}

/** The class's inputs in the editor's order: `input_order` when the server sends it, else required then optional as listed (4.2). */
function inputOrder(listed: Input[], order: unknown): Input[] {
  if (!isObject(order)) return listed;
  const byName = new Map(listed.map((i) => [i.name, i]));
  const names = [...(Array.isArray(order.required) ? order.required : []), ...(Array.isArray(order.optional) ? order.optional : [])];
  const out: Input[] = [];
  for (const name of names) {
    const input = typeof name === 'string' ? byName.get(name) : undefined;
    if (input && !out.includes(input)) out.push(input);
  }
  for (const input of listed) if (!out.includes(input)) out.push(input);
  return out;
}

/** A widget's slot and its companions (4.3). */
function slotsOf(input: Input): WidgetSlot[] {
  const { name, type, options: o } = input;
  const slot: WidgetSlot = { name, sent: true, initial: initialOf(input), type };
  if (type === 'STRING' && o.dynamicPrompts === true) slot.dynamicPrompts = true;
  if (input.combo && (o.image_folder === 'output' || o.image_folder === 'temp')) slot.folder = o.image_folder;
  const control = o.control_after_generate;
  const control1 = (initial: unknown): WidgetSlot => ({ name: 'control_after_generate', sent: false, initial, type: 'COMBO' });
  if (type === 'INT' && (control ? true : control !== false && (name === 'seed' || name === 'noise_seed'))) return [slot, control1(typeof control === 'string' ? control : 'randomize')];
  if (type === 'FLOAT' && control) return [slot, control1('fixed')];
  if (type === 'COMBO' && control) {
    const multi = o.multi_select === true || o.multiselect === true;
    return multi ? [slot, control1('randomize')] : [slot, control1('randomize'), { name: 'control_filter_list', sent: false, initial: '', type: 'STRING' }];
  }
  return [slot];
}

/** What the editor starts a widget with: the default, else the first choice, else 0, `""` or false (2.4). */
function initialOf(input: Input): unknown {
  if (input.options.default !== undefined) return input.options.default;
  if (input.combo) return input.combo[0];
  return input.type === 'INT' || input.type === 'FLOAT' ? 0 : input.type === 'BOOLEAN' ? false : input.type === 'STRING' ? '' : null;
}

/** What the editor sends for a widget's value (5.5.4): wrapped lists and curves, processed prompts, folder suffixes. */
export function sentValue(slot: WidgetSlot, value: unknown, random: () => number): unknown {
  if (slot.type === 'CURVE' && value != null) return { __type__: 'CURVE', __value__: value };
  if (Array.isArray(value)) return { __value__: value };
  if (slot.dynamicPrompts && typeof value === 'string') return dynamicPrompt(value, random);
  if (slot.folder && typeof value === 'string' && !/ \[(output|temp|input)\]$/.test(value)) return `${value} [${slot.folder}]`;
  return value;
}

/**
 * How deep the `{a|b}` choices of a dynamic prompt nest (escapes skipped): each level is a recursion, of
 * {@link dynamicPrompt} as of the editor's own, so a hostile text of 20 000 `{` overflows the stack.
 */
export function promptNesting(text: string): number {
  let [depth, deepest] = [0, 0];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === '}' && depth > 0) depth--;
  }
  return deepest;
}

/**
 * The editor's dynamic prompt (DP): C-style comments removed, then each
 * `{a|b|c}` (nested allowed) replaced by one option, picked as
 * `options[Math.floor(random() * options.length)]` and processed again;
 * `\{`, `\}`, `\|` unescaped at the end of each pass.
 */
export function dynamicPrompt(source: string, random: () => number): string {
  const text = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*/g, '');
  let i = 0;
  // An escape is kept as written (backslash included) until the final unescape.
  const escaped = () => `\\${text[i++] ?? ''}`;
  const choice = (): string => {
    const options: string[] = [];
    let current = '';
    let depth = 0;
    while (i < text.length) {
      const c = text[i++]!;
      if (c === '\\') {
        current += escaped();
        continue;
      }
      if (c === '{') depth++;
      else if (c === '}') {
        if (depth === 0) break;
        depth--;
      } else if (c === '|' && depth === 0) {
        options.push(current);
        current = '';
        continue;
      }
      current += c;
    }
    options.push(current);
    return dynamicPrompt(options[Math.floor(random() * options.length)] ?? '', random);
  };
  let out = '';
  while (i < text.length) {
    const c = text[i++]!;
    out += c === '\\' ? escaped() : c === '{' ? choice() : c;
  }
  return out.replace(/\\([{}|])/g, '$1');
}
