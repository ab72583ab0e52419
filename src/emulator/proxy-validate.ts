/**
 * The proxy's request checks: the same rules as the SDK (`proxy/rules.ts`,
 * `schemas/proxy.ts`), written again so a bug on one side is caught by the
 * other.
 *
 * @module
 */
import { isObject } from '../schemas/rule.ts';
import { HttpError } from './reply.ts';
import { FAIL_IMAGE_PREFIX, RELIGHT_STYLES, type ProxyOperation } from './proxy-state.ts';


type Check = (value: unknown, field: string) => void;

function bad(field: string, message: string): HttpError {
  return new HttpError(400, `${field}: ${message}`, 'bad_request');
}

const string: Check = (v, f) => {
  if (typeof v !== 'string') throw bad(f, 'must be a string');
};
const boolean: Check = (v, f) => {
  if (typeof v !== 'boolean') throw bad(f, 'must be a boolean');
};
const number: Check = (v, f) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(f, 'must be a number');
};
const percent: Check = (v, f) => {
  number(v, f);
  if ((v as number) < 0 || (v as number) > 100) throw bad(f, 'must be from 0 to 100');
};

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

// Standard or URL-safe alphabet, padding optional; whitespace (MIME line breaks) is stripped first.
const BASE64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/;
const DATA_URI = /^data:[^,]*;base64,/i;

const image: Check = (v, f) => {
  if (typeof v !== 'string' || v === '') throw bad(f, 'must be a non-empty string: base64 data or an http(s) URL');
  if (f === 'image' && v.startsWith(FAIL_IMAGE_PREFIX)) return;
  // Base64 never holds a colon, so anything with a scheme is a URL.
  if (/^[a-z][a-z0-9+.-]*:/i.test(v) && !DATA_URI.test(v)) {
    if (!isHttpUrl(v)) throw bad(f, 'must be base64 data or an absolute http(s) URL');
    return;
  }
  if (!BASE64.test(v.replace(DATA_URI, '').replace(/\s+/g, ''))) throw bad(f, 'is neither base64 data nor an http(s) URL');
};

const webhookUrl: Check = (v, f) => {
  if (typeof v !== 'string' || !isHttpUrl(v)) throw bad(f, 'must be an absolute http(s) URL');
};

const style: Check = (v, f) => {
  if (!(RELIGHT_STYLES as readonly unknown[]).includes(v)) throw bad(f, `must be one of ${RELIGHT_STYLES.join(', ')}`);
};

// `(text:weight)`: innermost parentheses holding a colon; a non-numeric weight is prose, not emphasis.
const EMPHASIS = /\(([^()]*):([^():]*)\)/g;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;

const prompt: Check = (v, f) => {
  string(v, f);
  for (const m of (v as string).matchAll(EMPHASIS)) {
    const raw = (m[2] ?? '').trim();
    if (!DECIMAL.test(raw)) continue;
    const weight = Number(raw);
    if (weight < 1 || weight > 1.4) throw bad(f, `emphasis weight ${raw} in "${m[0]}" is outside 1–1.4`);
  }
};

const ADVANCED: Record<string, Check> = {
  blacks: number,
  brightness: number,
  contrast: number,
  saturation: number,
  whites: number,
  engine: string,
  transfer_light_a: string,
  transfer_light_b: string,
  fixed_generation: boolean,
};

const advancedSettings: Check = (v, f) => {
  if (!isObject(v)) throw bad(f, 'must be an object');
  checkMembers(v, ADVANCED, `${f}.`);
};

const RELIGHT: Record<string, Check> = {
  image,
  prompt,
  style,
  change_background: boolean,
  interpolate_from_original: boolean,
  light_transfer_strength: percent,
  preserve_details: boolean,
  transfer_light_from_lightmap: image,
  transfer_light_from_reference_image: image,
  webhook_url: webhookUrl,
  advanced_settings: advancedSettings,
};

const SKIN: Record<string, Check> = {
  image,
  sharpen: percent,
  smart_grain: percent,
  webhook_url: webhookUrl,
};

// Unknown members are refused, like the SDK's strict schemas: a misspelt
// option of a paid job should fail loudly, not be silently dropped.
function checkMembers(obj: Record<string, unknown>, checks: Record<string, Check>, prefix: string): void {
  for (const [key, value] of Object.entries(obj)) {
    const check = checks[key];
    if (!check) throw bad(`${prefix}${key}`, 'is not a known field');
    check(value, `${prefix}${key}`);
  }
}

/** Validates a job body; `image` is the one required member. Throws 400 naming the field. */
export function validateJob(operation: ProxyOperation, body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw bad('body', 'must be a JSON object');
  if (body.image === undefined) throw bad('image', 'is required');
  checkMembers(body, operation === 'image-relight' ? RELIGHT : SKIN, '');
  if (body.transfer_light_from_lightmap !== undefined && body.transfer_light_from_reference_image !== undefined) {
    throw bad('transfer_light_from_reference_image', 'cannot be combined with transfer_light_from_lightmap');
  }
  return body;
}

