/**
 * Schemas of the registry document (`registry-and-proxy.md`, "Resources and
 * their fields"). Field names are the wire names. Every response object is
 * loose: unknown fields are kept. Every field is optional because the spec
 * marks none as required; a field that is present must have its type.
 *
 * @module
 */
import * as z from 'zod/mini';
import { openEnum, opt, strings } from './common.ts';

/** Values of `NodeStatus`. */
export const NODE_STATUSES = ['NodeStatusActive', 'NodeStatusDeleted', 'NodeStatusBanned'] as const;
/** Values of `NodeVersionStatus`. */
export const NODE_VERSION_STATUSES = [
  'NodeVersionStatusActive',
  'NodeVersionStatusDeleted',
  'NodeVersionStatusBanned',
  'NodeVersionStatusPending',
  'NodeVersionStatusFlagged',
] as const;
/** Values of `PublisherStatus`. */
export const PUBLISHER_STATUSES = ['PublisherStatusActive', 'PublisherStatusBanned'] as const;

/** `NodeStatus`; unknown values are kept. */
export const NodeStatus = openEnum(NODE_STATUSES);
/** `NodeVersionStatus`; unknown values are kept. */
export const NodeVersionStatus = openEnum(NODE_VERSION_STATUSES);
/** `PublisherStatus`; unknown values are kept. */
export const PublisherStatus = openEnum(PUBLISHER_STATUSES);

/** `ErrorResponse`: the body of every registry error. */
export const ErrorResponse = z.looseObject({ error: z.string(), message: z.string() });

/** `PublisherUser` (personal data; returned to callers). */
export const PublisherUser = z.looseObject({ id: opt(z.string()), name: opt(z.string()), email: opt(z.string()) });

/** `PublisherMember`. */
export const PublisherMember = z.looseObject({ id: opt(z.string()), role: opt(z.string()), user: opt(PublisherUser) });

const publisherFields = {
  id: opt(z.string()),
  name: opt(z.string()),
  description: opt(z.string()),
  logo: opt(z.string()),
  members: opt(z.array(PublisherMember)),
  source_code_repo: opt(z.string()),
  support: opt(z.string()),
  website: opt(z.string()),
  createdAt: opt(z.string()),
};

/** `Publisher`. */
export const Publisher = z.looseObject({ ...publisherFields, status: opt(PublisherStatus) });

// Fields a Node and a NodeVersion both carry.
const compatibilityFields = {
  supported_accelerators: opt(strings),
  supported_platformui_frontend_version: opt(z.string()),
  supported_platformui_version: opt(z.string()),
  supported_os: opt(strings),
  tags: opt(strings),
  /** Admin-only tags (security warnings, admin metadata). */
  tags_admin: opt(strings),
};

const nodeVersionFields = {
  id: opt(z.string()),
  node_id: opt(z.string()),
  version: opt(z.string()),
  changelog: opt(z.string()),
  platform_node_extract_status: opt(z.string()),
  createdAt: opt(z.string()),
  dependencies: opt(strings),
  deprecated: opt(z.boolean()),
  downloadUrl: opt(z.string()),
  status_reason: opt(z.string()),
  ...compatibilityFields,
};

/** `NodeVersion`. */
export const NodeVersion = z.looseObject({ ...nodeVersionFields, status: opt(NodeVersionStatus) });

const nodeFields = {
  id: opt(z.string()),
  name: opt(z.string()),
  author: opt(z.string()),
  description: opt(z.string()),
  banner_url: opt(z.string()),
  icon: opt(z.string()),
  /** @deprecated use `tags`; will be removed in a future version of the API. */
  category: opt(z.string()),
  created_at: opt(z.string()),
  downloads: opt(z.int()),
  github_stars: opt(z.int()),
  license: opt(z.string()),
  preempted_platform_node_names: opt(strings),
  rating: opt(z.number()),
  repository: opt(z.string()),
  search_ranking: opt(z.int()),
  status_detail: opt(z.string()),
  ...compatibilityFields,
  translations: opt(z.record(z.string(), z.unknown())),
};

/** `Node`: a custom node (extension package). */
export const Node = z.looseObject({
  ...nodeFields,
  latest_version: opt(NodeVersion),
  publisher: opt(Publisher),
  status: opt(NodeStatus),
});

/**
 * Body of `POST /publishers/{publisherId}/nodes`. As the spec says, the nested
 * `latest_version` and `publisher` carry no `status`; the node's own `status`
 * is a known `NodeStatus`. Checked before the request is sent.
 */
export const CreateNodeRequest = z.looseObject({
  ...nodeFields,
  id: z.string().check(z.minLength(1)),
  latest_version: opt(z.strictObject({ ...nodeVersionFields })),
  publisher: opt(z.strictObject({ ...publisherFields })),
  status: opt(z.enum(NODE_STATUSES)),
});

/** The paginated envelope of `GET /nodes/search` and `GET /publishers/{id}/nodes/v2`. */
export const NodePage = z.looseObject({
  limit: z.int(),
  nodes: z.array(Node),
  page: z.int(),
  total: z.int(),
  totalPages: z.int(),
});

/** Response of `GET /publishers`. */
export const PublisherList = z.array(Publisher);

/** A custom node as returned by the registry. */
export type Node = z.infer<typeof Node>;
/** A version of a node. */
export type NodeVersion = z.infer<typeof NodeVersion>;
/** A publisher. */
export type Publisher = z.infer<typeof Publisher>;
/** A member of a publisher. */
export type PublisherMember = z.infer<typeof PublisherMember>;
/** The user of a publisher member. */
export type PublisherUser = z.infer<typeof PublisherUser>;
/** `{ error, message }`. */
export type ErrorResponse = z.infer<typeof ErrorResponse>;
/** `NodeStatus` value (open). */
export type NodeStatus = z.infer<typeof NodeStatus>;
/** `NodeVersionStatus` value (open). */
export type NodeVersionStatus = z.infer<typeof NodeVersionStatus>;
/** `PublisherStatus` value (open). */
export type PublisherStatus = z.infer<typeof PublisherStatus>;
/** The body accepted by `createNode`. */
export type CreateNodeRequest = z.input<typeof CreateNodeRequest>;
/** One page of nodes, as the wire carries it. */
export type NodePage = z.infer<typeof NodePage>;

const pageNumber = z.int().check(z.gte(1));

/** Query of `GET /nodes/search`: the spec's eight parameters, nothing else. */
export const SearchNodesParams = z.strictObject({
  page: opt(pageNumber),
  limit: opt(pageNumber),
  search: opt(z.string()),
  repository_url_search: opt(z.string()),
  platform_node_search: opt(z.string()),
  supported_os: opt(z.string()),
  supported_accelerator: opt(z.string()),
  include_banned: opt(z.boolean()),
});

/**
 * Query of `GET /publishers/{id}/nodes/v2`. The spec does not name its
 * parameters; `page`, `limit` and `include_banned` are the registry's, and any
 * other scalar is passed through as given.
 */
export const ListPublisherNodesParams = z.catchall(
  z.object({ page: opt(pageNumber), limit: opt(pageNumber), include_banned: opt(z.boolean()) }),
  z.union([z.string(), z.number(), z.boolean()]),
);

/** Parameters of `searchNodes`. */
export type SearchNodesParams = z.input<typeof SearchNodesParams>;
/** Parameters of `listPublisherNodes`. */
export type ListPublisherNodesParams = z.input<typeof ListPublisherNodesParams>;
