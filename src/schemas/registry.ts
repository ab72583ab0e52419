/**
 * Schemas of the registry document (`registry-and-proxy.md`, "Resources and
 * their fields"). Field names are the wire names. Every response object is
 * loose at runtime (unknown fields are kept) and typed by a named interface
 * without index signature (see `common.ts`). Every resource field is optional
 * because the spec marks none as required and no recording shows otherwise; a
 * field that is present must have its type. The page envelope's five fields
 * are required: the spec lists them as the response of both list endpoints.
 *
 * @module
 */
import * as z from 'zod/mini';
import { NODE_STATUSES, NODE_VERSION_STATUSES, PUBLISHER_STATUSES } from './values.ts';
export { NODE_STATUSES, NODE_VERSION_STATUSES, PUBLISHER_STATUSES } from './values.ts';
import { openEnum, opt, strings, type Checks, type Fields, type Model, type Same } from './common.ts';


/** `NodeStatus`; unknown values are kept. */
export const NodeStatus = openEnum(NODE_STATUSES);
/** `NodeVersionStatus`; unknown values are kept. */
export const NodeVersionStatus = openEnum(NODE_VERSION_STATUSES);
/** `PublisherStatus`; unknown values are kept. */
export const PublisherStatus = openEnum(PUBLISHER_STATUSES);

/** `NodeStatus` value: one of {@link NODE_STATUSES}, or any other string the registry sends. */
export type NodeStatus = (typeof NODE_STATUSES)[number] | (string & {});
/** `NodeVersionStatus` value: one of {@link NODE_VERSION_STATUSES}, or any other string. */
export type NodeVersionStatus = (typeof NODE_VERSION_STATUSES)[number] | (string & {});
/** `PublisherStatus` value: one of {@link PUBLISHER_STATUSES}, or any other string. */
export type PublisherStatus = (typeof PUBLISHER_STATUSES)[number] | (string & {});

/** `ErrorResponse`: the body of every registry error. Both fields are required by the spec. */
export interface ErrorResponse {
  error: string;
  message: string;
}

/** `PublisherUser` (personal data; returned to callers). */
export interface PublisherUser {
  id?: string;
  name?: string;
  email?: string;
}

/** `PublisherMember`. */
export interface PublisherMember {
  id?: string;
  /** Role of the user in the publisher. */
  role?: string;
  user?: PublisherUser;
}

/** `Publisher`. */
export interface Publisher {
  /** Unique identifier, akin to a username; lowercase. */
  id?: string;
  name?: string;
  description?: string;
  /** URL of the logo. */
  logo?: string;
  members?: PublisherMember[];
  source_code_repo?: string;
  status?: PublisherStatus;
  support?: string;
  website?: string;
  /** Date-time (ISO 8601). */
  createdAt?: string;
}

/** `NodeVersion`: one version of a node. */
export interface NodeVersion {
  id?: string;
  /** Identifier of the owning node. */
  node_id?: string;
  /** Semantic version; unique per node. */
  version?: string;
  /** Summary of changes. */
  changelog?: string;
  /** Status of the node-extraction process. */
  platform_node_extract_status?: string;
  /** Date-time (ISO 8601). */
  createdAt?: string;
  /** Pip dependencies. */
  dependencies?: string[];
  /** Whether this version is deprecated. */
  deprecated?: boolean;
  /** Output only: URL to download this version. */
  downloadUrl?: string;
  status?: NodeVersionStatus;
  status_reason?: string;
  supported_accelerators?: string[];
  supported_platformui_frontend_version?: string;
  supported_platformui_version?: string;
  supported_os?: string[];
  tags?: string[];
  /** Admin-only tags (security warnings, admin metadata). */
  tags_admin?: string[];
}

/** `Node`: a custom node (extension package). */
export interface Node {
  /** Unique identifier of the node. */
  id?: string;
  /** Display name. */
  name?: string;
  author?: string;
  description?: string;
  /** URL of the banner. */
  banner_url?: string;
  /** URL of the icon. */
  icon?: string;
  /** @deprecated use `tags`; will be removed in a future version of the API. */
  category?: string;
  /** Creation time, date-time (ISO 8601). */
  created_at?: string;
  /** Number of downloads. */
  downloads?: number;
  /** Stars on the code repository. */
  github_stars?: number;
  latest_version?: NodeVersion;
  /** Path to the LICENSE file in the node's repository. */
  license?: string;
  /** Node names preempted by this node. */
  preempted_platform_node_names?: string[];
  publisher?: Publisher;
  /** Average rating. */
  rating?: number;
  /** URL of the repository. */
  repository?: string;
  /** Used to sort search results. */
  search_ranking?: number;
  status?: NodeStatus;
  status_detail?: string;
  /** E.g. CUDA, DirectML, ROCm. */
  supported_accelerators?: string[];
  /** Supported frontend versions. */
  supported_platformui_frontend_version?: string;
  /** Supported host-application versions. */
  supported_platformui_version?: string;
  /** Supported operating systems. */
  supported_os?: string[];
  tags?: string[];
  /** Admin-only tags (security warnings, admin metadata). */
  tags_admin?: string[];
  /** Maps a language key to an object of translated node metadata. */
  translations?: Record<string, unknown>;
}

/** The paginated envelope of `GET /nodes/search` and `GET /publishers/{id}/nodes/v2`, as the wire carries it. */
export interface NodePage {
  /** Maximum nodes per page. */
  limit: number;
  nodes: Node[];
  /** Current page (1-based). */
  page: number;
  /** Total nodes. */
  total: number;
  totalPages: number;
}

/**
 * The body accepted by `createNode`: a {@link Node} with `id` required, whose
 * nested `latest_version` and `publisher` carry no `status` and whose own
 * `status` is a known `NodeStatus`.
 */
export interface CreateNodeRequest extends Omit<Node, 'id' | 'latest_version' | 'publisher' | 'status'> {
  /** Unique identifier of the node (non-empty). */
  id: string;
  latest_version?: Omit<NodeVersion, 'status'>;
  publisher?: Omit<Publisher, 'status'>;
  status?: (typeof NODE_STATUSES)[number];
}

const errorResponseShape = { error: z.string(), message: z.string() };
const publisherUserShape = { id: opt(z.string()), name: opt(z.string()), email: opt(z.string()) };

/** `ErrorResponse` schema. */
export const ErrorResponse: Model<ErrorResponse> = z.looseObject(errorResponseShape);
/** `PublisherUser` schema. */
export const PublisherUser: Model<PublisherUser> = z.looseObject(publisherUserShape);

const publisherMemberShape = { id: opt(z.string()), role: opt(z.string()), user: opt(PublisherUser) };
/** `PublisherMember` schema. */
export const PublisherMember: Model<PublisherMember> = z.looseObject(publisherMemberShape);

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
const publisherShape = { ...publisherFields, status: opt(PublisherStatus) };

/** `Publisher` schema. */
export const Publisher: Model<Publisher> = z.looseObject(publisherShape);

// Fields a Node and a NodeVersion both carry.
const compatibilityFields = {
  supported_accelerators: opt(strings),
  supported_platformui_frontend_version: opt(z.string()),
  supported_platformui_version: opt(z.string()),
  supported_os: opt(strings),
  tags: opt(strings),
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
const nodeVersionShape = { ...nodeVersionFields, status: opt(NodeVersionStatus) };

/** `NodeVersion` schema. */
export const NodeVersion: Model<NodeVersion> = z.looseObject(nodeVersionShape);

const nodeFields = {
  id: opt(z.string()),
  name: opt(z.string()),
  author: opt(z.string()),
  description: opt(z.string()),
  banner_url: opt(z.string()),
  icon: opt(z.string()),
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
const nodeShape = { ...nodeFields, latest_version: opt(NodeVersion), publisher: opt(Publisher), status: opt(NodeStatus) };

/** `Node` schema: a custom node (extension package). */
export const Node: Model<Node> = z.looseObject(nodeShape);

const createNodeShape = {
  ...nodeFields,
  id: z.string().check(z.minLength(1)),
  latest_version: opt(z.strictObject({ ...nodeVersionFields })),
  publisher: opt(z.strictObject({ ...publisherFields })),
  status: opt(z.enum(NODE_STATUSES)),
};

/**
 * Body of `POST /publishers/{publisherId}/nodes`. As the spec says, the nested
 * `latest_version` and `publisher` carry no `status`; the node's own `status`
 * is a known `NodeStatus`. Checked before the request is sent; unknown
 * top-level fields are sent as given.
 */
export const CreateNodeRequest: Model<CreateNodeRequest> = z.looseObject(createNodeShape);

const nodePageShape = { limit: z.int(), nodes: z.array(Node), page: z.int(), total: z.int(), totalPages: z.int() };

/** The paginated envelope of `GET /nodes/search` and `GET /publishers/{id}/nodes/v2`. */
export const NodePage: Model<NodePage> = z.looseObject(nodePageShape);

/** Response of `GET /publishers`. */
export const PublisherList = z.array(Publisher);

/** Response of `GET /nodes/{nodeId}/versions`: a bare, unpaginated array. */
export const NodeVersionList = z.array(NodeVersion);

const bulkIdentifier = z.looseObject({ node_id: opt(z.string()), version: opt(z.string()) });
/** One item of `POST /bulk/nodes/versions`: `status` is `success` (with `node_version`), `not_found` or `error` (with `error_message`). */
export const BulkNodeVersionItem = z.looseObject({ status: z.string(), node_version: opt(NodeVersion), error_message: opt(z.string()), identifier: opt(bulkIdentifier) });
/** Response of `POST /bulk/nodes/versions`. */
export const BulkNodeVersionsResponse = z.looseObject({ node_versions: z.array(BulkNodeVersionItem) });

/** Response of `POST /publishers/{publisherId}/nodes/{nodeId}/versions`: where to PUT the archive, and the version created. */
export const PublishNodeVersionResponse = z.looseObject({ signedUrl: z.string(), node_version: NodeVersion });

// Each interface above is exactly what its shape validates.
type _Exact = Checks<
  [
    Same<ErrorResponse, Fields<typeof errorResponseShape>>,
    Same<PublisherUser, Fields<typeof publisherUserShape>>,
    Same<PublisherMember, Fields<typeof publisherMemberShape>>,
    Same<Publisher, Fields<typeof publisherShape>>,
    Same<NodeVersion, Fields<typeof nodeVersionShape>>,
    Same<Node, Fields<typeof nodeShape>>,
    Same<CreateNodeRequest, z.input<z.ZodMiniObject<typeof createNodeShape>>>,
    Same<NodePage, Fields<typeof nodePageShape>>,
    Same<NodeStatus, z.infer<typeof NodeStatus>>,
  ]
>;

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

/** Query of `GET /nodes`: paginated like search; `node_id` and `sort` are repeated keys. */
export const ListNodesParams = z.strictObject({
  page: opt(pageNumber),
  limit: opt(pageNumber),
  node_id: opt(z.array(z.string().check(z.minLength(1)))),
  supported_os: opt(z.string()),
  supported_accelerator: opt(z.string()),
  include_banned: opt(z.boolean()),
  timestamp: opt(z.string()),
  latest: opt(z.boolean()),
  sort: opt(z.array(z.string())),
  platformui_version: opt(z.string()),
  form_factor: opt(z.string()),
});

/** Parameters of `listNodes`. */
export type ListNodesParams = z.input<typeof ListNodesParams>;

/** Parameters of `searchNodes`. */
export type SearchNodesParams = z.input<typeof SearchNodesParams>;
/** Parameters of `listPublisherNodes`. */
export type ListPublisherNodesParams = z.input<typeof ListPublisherNodesParams>;
