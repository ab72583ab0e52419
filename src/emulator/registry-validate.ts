/**
 * The create-node body check of the emulator's registry (endpoint 2): each
 * member of a Node, its `latest_version` and `publisher` against the spec's
 * kinds, with a 400 naming the field.
 *
 * @module
 */
import { NODE_STATUSES } from '../schemas/values.ts';
import { HttpError } from './reply.ts';
import { SEMVER, type Node } from './registry.ts';

type FieldKind = 'string' | 'int' | 'number' | 'boolean' | 'strings' | 'object';

// Field kinds a Node and a NodeVersion both carry.
const COMPATIBILITY_FIELDS: Record<string, FieldKind> = {
  supported_accelerators: 'strings',
  supported_platformui_frontend_version: 'string',
  supported_platformui_version: 'string',
  supported_os: 'strings',
  tags: 'strings',
  tags_admin: 'strings',
};

const NODE_FIELDS: Record<string, FieldKind> = {
  name: 'string',
  author: 'string',
  description: 'string',
  banner_url: 'string',
  icon: 'string',
  category: 'string',
  created_at: 'string',
  downloads: 'int',
  github_stars: 'int',
  license: 'string',
  preempted_platform_node_names: 'strings',
  rating: 'number',
  repository: 'string',
  search_ranking: 'int',
  status_detail: 'string',
  ...COMPATIBILITY_FIELDS,
  translations: 'object',
};

const VERSION_FIELDS: Record<string, FieldKind> = {
  id: 'string',
  node_id: 'string',
  version: 'string',
  changelog: 'string',
  platform_node_extract_status: 'string',
  createdAt: 'string',
  dependencies: 'strings',
  deprecated: 'boolean',
  downloadUrl: 'string',
  status_reason: 'string',
  ...COMPATIBILITY_FIELDS,
};

const PUBLISHER_FIELDS: Record<string, FieldKind> = {
  id: 'string',
  name: 'string',
  description: 'string',
  logo: 'string',
  source_code_repo: 'string',
  support: 'string',
  website: 'string',
  createdAt: 'string',
};

const NODE_ID = /^[a-z0-9][a-z0-9_-]*$/i;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(field: string, message: string): HttpError {
  return new HttpError(400, `${field}: ${message}`, 'bad_request');
}

function checkFields(obj: Record<string, unknown>, spec: Record<string, FieldKind>, prefix: string): void {
  for (const [key, kind] of Object.entries(spec)) {
    if (!(key in obj)) continue;
    const v = obj[key];
    const field = prefix + key;
    const ok =
      kind === 'string' ? typeof v === 'string'
      : kind === 'int' ? Number.isSafeInteger(v)
      : kind === 'number' ? typeof v === 'number' && Number.isFinite(v)
      : kind === 'boolean' ? typeof v === 'boolean'
      : kind === 'strings' ? Array.isArray(v) && v.every((x) => typeof x === 'string')
      : isObject(v);
    const names: Record<FieldKind, string> = {
      string: 'a string',
      int: 'an integer',
      number: 'a number',
      boolean: 'a boolean',
      strings: 'an array of strings',
      object: 'an object',
    };
    if (!ok) throw bad(field, `must be ${names[kind]}`);
  }
}

/**
 * Validates a create-node body against the spec (endpoint 2) and returns it
 * typed. Unknown members are kept, as a forward-compatible server would.
 */
export function validateCreateNode(body: unknown, publisherId: string): Node {
  if (!isObject(body)) throw bad('body', 'must be a JSON object (a Node)');
  if (typeof body.id !== 'string') throw bad('id', 'is required and must be a string');
  if (body.id.length > 100 || !NODE_ID.test(body.id)) throw bad('id', `must match ${NODE_ID.source} (at most 100 characters)`);
  checkFields(body, NODE_FIELDS, '');
  if ('status' in body && !(NODE_STATUSES as readonly unknown[]).includes(body.status)) {
    throw bad('status', `must be one of ${NODE_STATUSES.join(', ')}`);
  }
  if (isObject(body.translations)) {
    for (const [lang, value] of Object.entries(body.translations)) {
      if (!isObject(value)) throw bad(`translations.${lang}`, 'must be an object');
    }
  }
  if ('latest_version' in body) {
    const v = body.latest_version;
    if (!isObject(v)) throw bad('latest_version', 'must be an object');
    if ('status' in v) throw bad('latest_version.status', 'must not be set in a request');
    checkFields(v, VERSION_FIELDS, 'latest_version.');
    if (typeof v.version === 'string' && !SEMVER.test(v.version)) throw bad('latest_version.version', 'must be a semantic version');
    if (typeof v.node_id === 'string' && v.node_id !== body.id) throw bad('latest_version.node_id', 'must equal id');
  }
  if ('publisher' in body) {
    const p = body.publisher;
    if (!isObject(p)) throw bad('publisher', 'must be an object');
    if ('status' in p) throw bad('publisher.status', 'must not be set in a request');
    checkFields(p, PUBLISHER_FIELDS, 'publisher.');
    if (typeof p.id === 'string' && p.id !== publisherId) throw bad('publisher.id', 'must equal the publisherId of the path');
    if ('members' in p && !Array.isArray(p.members)) throw bad('publisher.members', 'must be an array');
  }
  return body as unknown as Node;
}
