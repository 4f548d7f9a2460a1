import type { KubeObject, ResourceDescriptor, SelectableFields } from "@reconcile/api";
import type { TypeNode } from "../apply/schema.js";
import type { KindSchema } from "../schemas/kind-schema.js";
import type { FillPhase } from "./empty-values.js";
import type { PatchMeta } from "./patch.js";
import type { Schema } from "./schema.js";
import type { DryRunOption } from "./store/request-options.js";
import type { Strategy, WriteHookContext } from "./strategy.js";

export type { WriteHookContext } from "./strategy.js";

import type { SubresourceHandler } from "./subresource-handler.js";

// The contract between the kinds and the registry: what a kind's definition
// holds, read by the registry, its stores and the HTTP layer. The kinds
// (`kinds/`, `crd/`) build definitions; nothing here knows any kind.

/** One column of a `meta.k8s.io/v1` Table. */
export interface TableColumnDefinition {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  format: string;
  description: string;
  /** 0: always shown; 1: only with `-o wide`. */
  priority: number;
}

/** How one kind prints: its columns and the cells of one object. */
export interface Printer {
  columns: readonly TableColumnDefinition[];
  cells(object: KubeObject, now: number): unknown[];
  /** The order of a list's rows, where the kind's list printer sorts (FlowSchemas by precedence); default: as listed. */
  order?(objects: readonly KubeObject[]): readonly KubeObject[];
}

/**
 * Everything the server knows about one kind, in one value: what
 * kube-apiserver spreads over a resource's `RESTStorage`, its strategies, its
 * OpenAPI schema, its table convertor and its selectable fields. Built-in
 * kinds are defined under `kinds/`; a custom kind (a CRD, in time) is one
 * more definition added to the live {@link ResourceDefinitions} of a running
 * server.
 */
export interface ResourceDefinition<T extends KubeObject = KubeObject> {
  /** Group, version, kind, plural, scope, short names, categories, served subresources. */
  readonly descriptor: ResourceDescriptor<T>;
  /** Defaulting, validation and the per-kind rules of create, update, status and scale. */
  readonly strategy: Strategy;
  /** The shape the decoder checks the body against; `"any"` checks metadata only. */
  readonly schema: Schema;
  /** The fields beyond metadata a field selector may name, if the kind has any. */
  readonly selectableFields: SelectableFields | undefined;
  /** The columns of `kubectl get` (a `meta.k8s.io/v1` Table). */
  readonly printer: Printer;
  /** The verbs the resource serves, as discovery lists them (405 for a collection verb not listed). */
  readonly verbs: readonly string[];
  /** The top-level protobuf message a client may send for this kind, if any. */
  readonly protobufMessage: string | undefined;
  /**
   * Patch strategies and merge keys by position, for strategic merge patches
   * of this kind; undefined: the kind takes none (a custom resource: 415).
   */
  readonly patchMeta: PatchMeta | undefined;
  /**
   * The kind's subresources by name (`status`, `scale`, `binding`,
   * `eviction`, `finalize`…), each with the verbs it serves. Routing,
   * discovery and both clients read this map: a subresource is served
   * exactly when its kind's definition has a handler for it.
   */
  readonly subresources: Readonly<Record<string, SubresourceHandler>>;
  /**
   * Server-side apply's merge semantics (list types, map keys, atomic
   * structs); undefined: ObjectMeta over a deduced body.
   */
  readonly applyType: TypeNode | undefined;
  /**
   * The kind's OpenAPI schema: published under `/openapi/v3` for `kubectl
   * explain`, and the fields a body may hold (others are dropped and reported
   * as `fieldValidation` says). Undefined: no schema is published and no field
   * is unknown.
   */
  readonly openAPI: KindSchema | undefined;
  /**
   * Whether `metadata.generation` counts changes of the spec: kube-apiserver
   * sets it only where the kind's strategy does (`Generation = 1` in
   * `PrepareForCreate`), so ConfigMaps, Secrets, Services or Namespaces carry none.
   * `from-first-change`: none on create, then one more at each change (a CSIDriver's strategy).
   */
  readonly tracksGeneration: boolean | "from-first-change";
  /** The top-level field whose changes bump `metadata.generation`: `spec`, or a PodTemplate's `template`. */
  readonly generationFollows: string;
  /**
   * Whether a PUT without `metadata.resourceVersion` is applied to whatever is
   * stored (the strategy's `AllowUnconditionalUpdate`); when not, it is a 422.
   */
  readonly allowsUnconditionalUpdate: boolean;
  /**
   * Whether a PUT of an object that does not exist creates it (the
   * strategy's `AllowCreateOnUpdate`: Endpoints, Events, LimitRanges, Leases,
   * RuntimeClasses, RBAC's kinds); when not, it is a 404.
   */
  readonly allowsCreateOnUpdate: boolean;
  /**
   * The version objects of this kind are stored at, when it is not the
   * descriptor's: one of several served versions of a custom kind, whose
   * conversion (strategy None) changes only `apiVersion`. Objects written at
   * this version are stored at that one, and read back at this one.
   */
  readonly storageVersion: string | undefined;
  /**
   * The resource whose objects these are, when another's: events.k8s.io
   * Events are the core Events, stored under their keys at `storageVersion`
   * of that resource's group and converted by `conversion`. Undefined: the
   * descriptor's own.
   */
  readonly storedAs: Pick<ResourceDescriptor, "group" | "plural"> | undefined;
  /** Side effects of writes beside storage, if the kind has any. */
  readonly writeHooks: WriteHooks | undefined;
  /**
   * Fills in place the parts kube-apiserver always writes for this kind (Go's
   * encoding/json of its structs: `status: {}`, zero-valued scalars without
   * `omitempty`, null for zero times and for nil slices, maps and pointers
   * without `omitempty`), on every write: all but the nil ones before
   * validation, which reads them as absent, and the nil ones after it.
   * Undefined: nothing is added (custom kinds).
   */
  readonly fillEmptyValues: ((object: KubeObject, phase?: FillPhase) => void) | undefined;
  /**
   * The top-level fields Go holds as raw JSON (runtime.RawExtension: a
   * ControllerRevision's `data`), kept as sent, their nulls included. Empty
   * for custom kinds.
   */
  readonly rawFields: readonly string[];
  /**
   * Sent as a `Warning` with every answer about this kind at this version
   * (a CRD version marked `deprecated`).
   */
  readonly warning: string | undefined;
  /**
   * What an object read from storage becomes before it is served (a custom
   * kind's defaults for fields its schema gained after the object was
   * written). It must return its argument unchanged, or a changed copy.
   */
  readonly onRead: ((object: KubeObject) => KubeObject) | undefined;
  /**
   * Where the objects come from when they are computed on request rather
   * than stored (the resource metrics of `metrics.k8s.io`): get and list
   * read it, selectors apply, and every other verb is a 405.
   */
  readonly source: ObjectSource | undefined;
  /**
   * How objects change between this version and `storageVersion` when more
   * than `apiVersion` differs (a built-in kind's older version, such as
   * autoscaling/v1 HorizontalPodAutoscalers stored at v2). Undefined: only
   * `apiVersion` changes.
   */
  readonly conversion: VersionConversion | undefined;
}

/**
 * Converts one kind's objects between a served version and the stored one,
 * at once or asynchronously (a CRD's conversion webhook). A failure rejects
 * with the `StatusError` the client gets.
 */
export interface VersionConversion {
  /** The served object as it is stored (its `apiVersion` the storage version's). */
  toStorage(object: KubeObject): KubeObject | Promise<KubeObject>;
  /** The stored object as served (its `apiVersion` the served version's). */
  fromStorage(object: KubeObject): KubeObject | Promise<KubeObject>;
  /** Many stored objects as served, in one go (a list: one webhook call, not one per object). */
  fromStorageMany?(objects: readonly KubeObject[]): Promise<KubeObject[]>;
  /** Whether it answers later (a webhook): writes then wait for it to compare managers' fields per version. */
  readonly answersLater?: boolean;
}

/** The objects of a computed kind, now: those of `namespace`, or all of them when it is undefined. */
export interface ObjectSource {
  list(namespace: string | undefined): readonly KubeObject[];
  /**
   * A POST of the collection, for a kind whose objects are not kept but act
   * on another's (a Binding binds a pod, through `post` to its `binding`
   * subresource): what the client is answered with.
   */
  create?(
    namespace: string | undefined,
    body: unknown,
    options: DryRunOption,
    post: SubresourcePost,
  ): Promise<KubeObject>;
}

/** A POST to a subresource of an object of another kind (the registry's `createSubresource`). */
export type SubresourcePost = (
  resource: ResourceDescriptor,
  namespace: string | undefined,
  name: string,
  subresource: string,
  body: unknown,
  options: DryRunOption,
) => Promise<void>;

/**
 * Side effects of a kind's writes beside storage, as the BeginCreate and
 * AfterDelete hooks of upstream's REST storage (a Service's cluster IP).
 */
export interface WriteHooks {
  /**
   * Before a create is stored (after validation); returns what gives back
   * what it took, called when nothing is stored (a failed write, a dry run).
   */
  beginCreate?(object: KubeObject, context: WriteHookContext): (() => void) | undefined;
  /**
   * Before an update is validated and stored; returns what finishes it, told
   * whether the object was stored (commit what the update gave up) or not
   * (give back what it took).
   */
  beginUpdate?(
    object: KubeObject,
    old: KubeObject,
    context: WriteHookContext,
  ): ((stored: boolean) => void) | undefined;
  /** After an object has left storage. */
  afterDelete?(object: KubeObject, context: WriteHookContext): void;
}
