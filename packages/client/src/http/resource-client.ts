import {
  apiVersionOf,
  type DeepReadonly,
  type KubeObject,
  type ListOptions,
  newBadRequest,
  type ObjectList,
  type ResourceDescriptor,
  type Scale,
  type Status,
  type WatchEvent,
  type WatchOptions,
} from "@reconcile/api";
import type {
  CallOptions,
  DeleteCollectionOptions,
  DeleteOptions,
  DeleteResult,
  GetOptions,
  PatchOptions,
  ResourceClient,
  UpdateOptions,
  WriteOptions,
} from "../client.js";
import { patchContentTypes } from "../client.js";
import { withItemTypeMeta } from "./list-type-meta.js";

/** One request, for paths the typed resource clients do not cover (`requestJson`, `requestList`). */
/**
 * What client-go's metadata client accepts: the metadata-only form first,
 * then whole objects from a server that cannot give it.
 */
const metadataAccept = {
  list: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
  watch: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
};

export interface HttpRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path below the server URL, e.g. `/apis/apps/v1/namespaces/default/deployments`. */
  path: string;
  /** Query parameters; undefined and "" values are left out. */
  query?: Record<string, string | number | boolean | undefined> | undefined;
  /** Sent as JSON. */
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string | undefined;
  /**
   * Safe to send again after the connection failed once the request was
   * written (reads are). A request that is not is never sent twice unless the
   * server answered that it did not process it (429 or 5xx with `Retry-After`).
   */
  idempotent: boolean;
  /** The Accept header; default `application/json`. */
  accept?: string | undefined;
  /** A watch: the timeout covers only the wait for the server's answer. */
  watch?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** What a resource client sends its requests through: the {@link HttpClient}'s transport (client-go's RESTClient). */
export interface RestTransport {
  /** Sends a request and parses a JSON answer; every failure becomes a `StatusError`. */
  requestJson<R>(spec: HttpRequest): Promise<R>;
  /** Sends a list request and decodes the answer item by item as it arrives. */
  requestList<R>(spec: HttpRequest): Promise<R>;
  /** Opens a watch; resolves once the server has answered 200. */
  openWatch<T extends KubeObject>(spec: HttpRequest): Promise<AsyncIterable<WatchEvent<T>>>;
}

/**
 * One resource (and namespace) over HTTP(S), as client-go's typed clients:
 * the verbs become requests on the resource's paths, names and namespaces are
 * checked before they go into a URL, and list items get their kind back.
 */
export class HttpResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource: ResourceDescriptor<T>;
  readonly namespace: string | undefined;
  private readonly client: RestTransport;
  private readonly prefix: string;

  constructor(client: RestTransport, resource: ResourceDescriptor<T>, namespace: string | undefined) {
    this.client = client;
    this.resource = resource;
    this.namespace = namespace;
    this.prefix =
      resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  }

  async list(options: ListOptions = {}): Promise<ObjectList<T>> {
    return this.client
      .requestList<ObjectList<T>>({
        method: "GET",
        path: this.collectionPath(this.namespace),
        query: {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          limit: options.limit,
          continue: options.continue,
          resourceVersion: options.resourceVersion,
          resourceVersionMatch: options.resourceVersionMatch,
        },
        accept: options.metadataOnly ? metadataAccept.list : undefined,
        idempotent: true,
        signal: options.signal,
      })
      .then((list) => withItemTypeMeta({ ...list, metadata: list.metadata ?? {}, items: list.items ?? [] }));
  }

  async watch(options: WatchOptions = {}): Promise<AsyncIterable<WatchEvent<T>>> {
    return this.client.openWatch<T>({
      method: "GET",
      path: this.collectionPath(this.namespace),
      query: {
        watch: "true",
        resourceVersion: options.resourceVersion,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        allowWatchBookmarks: options.allowWatchBookmarks ? "true" : undefined,
        sendInitialEvents:
          options.sendInitialEvents === undefined ? undefined : String(options.sendInitialEvents),
        resourceVersionMatch: options.resourceVersionMatch,
        timeoutSeconds: options.timeoutSeconds,
      },
      accept: options.metadataOnly ? metadataAccept.watch : undefined,
      idempotent: true,
      signal: options.signal,
    });
  }

  async get(name: string, options: GetOptions = {}): Promise<T> {
    return this.client.requestJson<T>({
      method: "GET",
      path: this.itemPath(this.requireNamespace(undefined, name), name, options.subresource),
      idempotent: true,
      signal: options.signal,
    });
  }

  async create(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    const namespace = this.requireNamespace(object.metadata?.namespace, object.metadata?.name ?? "");
    return this.client.requestJson<T>({
      method: "POST",
      path: this.collectionPath(namespace),
      query: writeQuery(options),
      body: this.withTypeMeta(object),
      idempotent: false,
      signal: options.signal,
    });
  }

  async update(object: T | DeepReadonly<T>, options: UpdateOptions = {}): Promise<T> {
    return this.put(object, options.subresource, options);
  }

  async updateStatus(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    return this.put(object, "status", options);
  }

  async finalize(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    return this.put(object, "finalize", options);
  }

  async patch(name: string, patch: unknown, options: PatchOptions): Promise<T> {
    const contentType = patchContentTypes[options.type];
    if (contentType === undefined) throw newBadRequest(`unknown patch type ${JSON.stringify(options.type)}`);
    const namespace = this.requireNamespace(undefined, name);
    return this.client.requestJson<T>({
      method: "PATCH",
      path: this.itemPath(namespace, name, options.subresource),
      query: {
        ...writeQuery(options),
        ...(options.type === "apply" && options.force !== undefined ? { force: options.force } : {}),
      },
      body: patch,
      contentType,
      idempotent: false,
      signal: options.signal,
    });
  }

  async delete(name: string, options: DeleteOptions = {}): Promise<DeleteResult<T>> {
    const result = await this.client.requestJson<T | Status>({
      method: "DELETE",
      path: this.itemPath(this.requireNamespace(undefined, name), name),
      body: deleteOptionsBody(options),
      idempotent: false,
      signal: options.signal,
    });
    if ((result as { kind?: string }).kind === "Status") return { kind: "status", status: result as Status };
    return { kind: "object", object: result as T };
  }

  async deleteCollection(options: DeleteCollectionOptions = {}): Promise<ObjectList<T>> {
    const result = await this.client.requestJson<ObjectList<T> | Status>({
      method: "DELETE",
      path: this.collectionPath(this.namespace),
      query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector },
      body: deleteOptionsBody(options),
      idempotent: false,
      signal: options.signal,
    });
    if ((result as { kind?: string }).kind === "Status") return { metadata: {}, items: [] };
    const list = result as ObjectList<T>;
    return withItemTypeMeta({ ...list, metadata: list.metadata ?? {}, items: list.items ?? [] });
  }

  async getScale(name: string, options: CallOptions = {}): Promise<Scale> {
    return this.client.requestJson<Scale>({
      method: "GET",
      path: this.itemPath(this.requireNamespace(undefined, name), name, "scale"),
      idempotent: true,
      signal: options.signal,
    });
  }

  async updateScale(name: string, scale: Scale, options: WriteOptions = {}): Promise<Scale> {
    const namespace = this.requireNamespace(scale.metadata?.namespace, name);
    return this.client.requestJson<Scale>({
      method: "PUT",
      path: this.itemPath(namespace, name, "scale"),
      query: writeQuery(options),
      body: {
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        ...scale,
        metadata: { ...scale.metadata, name, namespace },
      },
      idempotent: false,
      signal: options.signal,
    });
  }

  private async put(
    object: T | DeepReadonly<T>,
    subresource: string | undefined,
    options: WriteOptions,
  ): Promise<T> {
    const name = object.metadata?.name;
    if (!name) throw newBadRequest("an update needs metadata.name");
    const namespace = this.requireNamespace(object.metadata?.namespace, name);
    return this.client.requestJson<T>({
      method: "PUT",
      path: this.itemPath(namespace, name, subresource),
      query: writeQuery(options),
      body: this.withTypeMeta(object),
      idempotent: false,
      signal: options.signal,
    });
  }

  private withTypeMeta(object: T | DeepReadonly<T>): unknown {
    return { apiVersion: apiVersionOf(this.resource), kind: this.resource.kind, ...object };
  }

  /** The namespace of a single-object call: the client's, else the object's; required for namespaced kinds. */
  private requireNamespace(fromObject: string | undefined, name: string): string | undefined {
    if (!this.resource.namespaced) return undefined;
    if (
      this.namespace !== undefined &&
      fromObject !== undefined &&
      fromObject !== "" &&
      fromObject !== this.namespace
    ) {
      throw newBadRequest(
        `the namespace of the provided object (${fromObject}) does not match the namespace sent on the request (${this.namespace})`,
      );
    }
    const namespace = this.namespace ?? (fromObject || undefined);
    if (namespace === undefined) {
      throw newBadRequest(
        `${this.resource.plural} ${JSON.stringify(name)}: a namespace is required (the client is not bound to one and the object names none)`,
      );
    }
    return namespace;
  }

  private collectionPath(namespace: string | undefined): string {
    if (namespace === undefined || !this.resource.namespaced) return `${this.prefix}/${this.resource.plural}`;
    checkPathSegment("namespace", namespace);
    return `${this.prefix}/namespaces/${encodeURIComponent(namespace)}/${this.resource.plural}`;
  }

  private itemPath(namespace: string | undefined, name: string, subresource?: string): string {
    if (name === "") throw newBadRequest(`${this.resource.plural}: resource name may not be empty`);
    checkPathSegment("resource name", name);
    const item = `${this.collectionPath(namespace)}/${encodeURIComponent(name)}`;
    if (!subresource) return item;
    checkPathSegment("subresource", subresource);
    return `${item}/${encodeURIComponent(subresource)}`;
  }
}

/**
 * Names and namespaces go into the URL path, where `.` and `..` would be
 * resolved away and `/` or `%` would change the target, so they are refused
 * before anything is sent (apimachinery's `IsValidPathSegmentName`, which
 * client-go's `Request.Name` and `Request.Namespace` apply).
 */
function checkPathSegment(what: "resource name" | "namespace" | "subresource", value: string): void {
  const problems: string[] = [];
  if (value === "." || value === "..") problems.push(`may not be '${value}'`);
  else {
    if (value.includes("/")) problems.push("may not contain '/'");
    if (value.includes("%")) problems.push("may not contain '%'");
  }
  if (problems.length > 0)
    throw newBadRequest(`invalid ${what} ${JSON.stringify(value)}: ${problems.join(", ")}`);
}

function writeQuery(options: WriteOptions): Record<string, string | undefined> {
  return { dryRun: options.dryRun, fieldManager: options.fieldManager };
}

function deleteOptionsBody(options: DeleteOptions): Record<string, unknown> {
  return {
    kind: "DeleteOptions",
    apiVersion: "v1",
    ...(options.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
    ...(options.propagationPolicy !== undefined ? { propagationPolicy: options.propagationPolicy } : {}),
    ...(options.preconditions !== undefined ? { preconditions: options.preconditions } : {}),
    ...(options.dryRun !== undefined ? { dryRun: [options.dryRun] } : {}),
  };
}
