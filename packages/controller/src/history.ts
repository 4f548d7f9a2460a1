import {
  type ControllerRevision,
  controllerRevisions,
  type DeepReadonly,
  getControllerOf,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  type KubeObject,
  type PodTemplateSpec,
  type Selector,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import {
  BaseControllerRefManager,
  type ClaimResult,
  type ControllerKind,
  type ControllerRefManagerOptions,
} from "./controller-ref-manager.js";
import { canonicalJson, hashControllerRevisionData } from "./hash.js";
import type { ControllerIndexer } from "./informer-types.js";

// The ControllerRevision history that StatefulSets and DaemonSets keep
// (upstream `pkg/controller/history`): immutable snapshots of a parent's
// template, named by the hash of their data, ordered by `revision`.

/** The label every revision carries: the hash of its data (upstream `ControllerRevisionHashLabel`). */
export const controllerRevisionHashLabel = "controller.kubernetes.io/hash";

type Revision = ControllerRevision | DeepReadonly<ControllerRevision>;

/** `<prefix>-<hash>`, the prefix cut to 223 characters so the name stays a valid name. */
export function controllerRevisionName(prefix: string, hash: string): string {
  return `${prefix.length > 223 ? prefix.slice(0, 223) : prefix}-${hash}`;
}

/** The hash that names `revision`: over its data, and `probe` (the collision count) when given. */
export function hashControllerRevision(revision: Revision, probe?: number | undefined): string {
  return hashControllerRevisionData(revision.data, probe);
}

/**
 * A new, unsaved revision of `parent` (upstream `NewControllerRevision`):
 * the template's labels plus the hash label, the parent as its controller,
 * `data`, `revision`, and the name `<parent>-<hash>`.
 */
export function newControllerRevision(
  parent: KubeObject | DeepReadonly<KubeObject>,
  parentKind: ControllerKind,
  templateLabels: Readonly<Record<string, string>> | undefined,
  data: unknown,
  revision: number,
  collisionCount?: number | undefined,
): ControllerRevision {
  const meta = parent.metadata ?? {};
  const created: ControllerRevision = {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: {
      ...(meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
      labels: { ...templateLabels },
      ownerReferences: [
        {
          apiVersion: parentKind.apiVersion,
          kind: parentKind.kind,
          name: meta.name ?? "",
          uid: meta.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: data as NonNullable<ControllerRevision["data"]>,
    revision,
  };
  const hash = hashControllerRevision(created, collisionCount);
  created.metadata!.name = controllerRevisionName(meta.name ?? "", hash);
  created.metadata!.labels![controllerRevisionHashLabel] = hash;
  return created;
}

/**
 * What a StatefulSet's or DaemonSet's revision holds (upstream `getPatch`):
 * a strategic-merge patch that puts the pod template back whole,
 * `{"spec":{"template":{…,"$patch":"replace"}}}`.
 */
export function templateRevisionData(template: PodTemplateSpec | DeepReadonly<PodTemplateSpec> | undefined): {
  spec: { template: Record<string, unknown> };
} {
  const copy = structuredClone(template ?? {}) as Record<string, unknown>;
  copy.$patch = "replace";
  return { spec: { template: copy } };
}

/** The template a revision made by {@link templateRevisionData} holds, without the directive. */
export function templateOfRevision(revision: Revision): PodTemplateSpec | undefined {
  const template = (revision.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec
    ?.template;
  if (template === undefined) return undefined;
  const { $patch: _, ...restored } = structuredClone(template);
  return restored as PodTemplateSpec;
}

/** Revisions in order of `revision`, then creation time, then name (upstream `SortControllerRevisions`). */
export function sortControllerRevisions<R extends Revision>(revisions: readonly R[]): R[] {
  return [...revisions].sort((a, b) => {
    if (a.revision !== b.revision) return a.revision - b.revision;
    const at = a.metadata?.creationTimestamp ?? "";
    const bt = b.metadata?.creationTimestamp ?? "";
    if (at !== bt) return at < bt ? -1 : 1;
    const an = a.metadata?.name ?? "";
    const bn = b.metadata?.name ?? "";
    return an < bn ? -1 : an > bn ? 1 : 0;
  });
}

/** Whether two revisions hold the same data (upstream `EqualRevision`; differing hash labels say no at once). */
export function equalRevision(a: Revision | undefined, b: Revision | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const ah = a.metadata?.labels?.[controllerRevisionHashLabel];
  const bh = b.metadata?.labels?.[controllerRevisionHashLabel];
  if (ah !== undefined && bh !== undefined && ah !== bh) return false;
  return canonicalJson(a.data ?? null) === canonicalJson(b.data ?? null);
}

/** The revisions equal to `needle`, in the order given (upstream `FindEqualRevisions`). */
export function findEqualRevisions<R extends Revision>(revisions: readonly R[], needle: Revision): R[] {
  return revisions.filter((revision) => equalRevision(revision, needle));
}

/** One more than the last revision of a sorted list, or 1 for none (upstream `nextRevision`). */
export function nextRevision(sorted: readonly Revision[]): number {
  return sorted.length === 0 ? 1 : sorted[sorted.length - 1]!.revision + 1;
}

/** Options of {@link ControllerRevisionHistory}. */
export interface ControllerRevisionHistoryOptions {
  /** Writes revisions. Required. */
  client: Client;
  /** The ControllerRevision informer's cache (its `namespace` index is read). Required. */
  indexer: ControllerIndexer<ControllerRevision>;
}

/** A write's abort signal. */
interface CallOptions {
  signal?: AbortSignal | undefined;
}

/**
 * Reads and writes one parent's revisions (upstream `history.Interface`
 * over the API, `realHistory`): lists from the cache, writes to the API server.
 */
export class ControllerRevisionHistory {
  readonly #client: Client;
  readonly #indexer: ControllerIndexer<ControllerRevision>;

  constructor(options: ControllerRevisionHistoryOptions) {
    this.#client = options.client;
    this.#indexer = options.indexer;
  }

  /** The revisions in the parent's namespace that match `selector` and that it owns or nobody owns. */
  list(
    parent: KubeObject | DeepReadonly<KubeObject>,
    selector: Selector,
  ): DeepReadonly<ControllerRevision>[] {
    const uid = parent.metadata?.uid;
    return this.#indexer.byIndex("namespace", parent.metadata?.namespace ?? "").filter((revision) => {
      if (!selector.matches(revision.metadata?.labels)) return false;
      const ref = getControllerOf(revision);
      return ref === undefined || ref.uid === uid;
    });
  }

  /**
   * Creates `revision` under the parent, named by its hash and the collision
   * count. A revision of that name with the same data is returned as it is;
   * one with other data is a collision: `collisionCount.value` grows and the
   * next name is tried (upstream `CreateControllerRevision`).
   */
  async create(
    parent: KubeObject | DeepReadonly<KubeObject>,
    revision: ControllerRevision,
    collisionCount: { value: number },
    options: CallOptions = {},
  ): Promise<ControllerRevision> {
    const namespace = parent.metadata?.namespace ?? "";
    const api = this.#client.resource(controllerRevisions, namespace);
    for (;;) {
      const hash = hashControllerRevision(revision, collisionCount.value);
      const attempt = structuredClone(revision);
      attempt.metadata = {
        ...attempt.metadata,
        namespace,
        name: controllerRevisionName(parent.metadata?.name ?? "", hash),
      };
      try {
        return await api.create(attempt, { signal: options.signal });
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        const existing = await api.get(attempt.metadata.name!, { signal: options.signal });
        if (canonicalJson(existing.data ?? null) === canonicalJson(attempt.data ?? null)) return existing;
        collisionCount.value++;
      }
    }
  }

  /** Gives `revision` the number `next`, re-reading on a conflict (upstream `UpdateControllerRevision`). */
  async update(revision: Revision, next: number, options: CallOptions = {}): Promise<ControllerRevision> {
    const api = this.#client.resource(controllerRevisions, revision.metadata?.namespace ?? "");
    let current = structuredClone(revision) as ControllerRevision;
    for (;;) {
      if (current.revision === next) return current;
      current.revision = next;
      try {
        return await api.update(current, { signal: options.signal });
      } catch (error) {
        if (!isConflict(error)) throw error;
        current = await api.get(revision.metadata?.name ?? "", { signal: options.signal });
      }
    }
  }

  /** Deletes `revision`; one already gone counts as deleted. */
  async delete(revision: Revision, options: CallOptions = {}): Promise<void> {
    try {
      await this.#client
        .resource(controllerRevisions, revision.metadata?.namespace ?? "")
        .delete(revision.metadata?.name ?? "", { signal: options.signal });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** Makes `parent` the controller of an orphaned revision (upstream `AdoptControllerRevision`). */
  async adopt(
    parent: KubeObject | DeepReadonly<KubeObject>,
    parentKind: ControllerKind,
    revision: Revision,
    options: CallOptions = {},
  ): Promise<ControllerRevision> {
    const owner = getControllerOf(revision);
    if (owner !== undefined) {
      throw new Error(`attempt to adopt revision owned by ${owner.kind}/${owner.name} (${owner.uid})`);
    }
    const meta = parent.metadata ?? {};
    const patch = {
      metadata: {
        ownerReferences: [
          {
            apiVersion: parentKind.apiVersion,
            kind: parentKind.kind,
            name: meta.name ?? "",
            uid: meta.uid ?? "",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        uid: revision.metadata?.uid,
      },
    };
    return this.#client
      .resource(controllerRevisions, revision.metadata?.namespace ?? "")
      .patch(revision.metadata?.name ?? "", patch, { type: "strategic-merge", signal: options.signal });
  }
}

/** Options of {@link ControllerRevisionControllerRefManager}. */
export interface ControllerRevisionControllerRefManagerOptions extends ControllerRefManagerOptions {
  /** Writes the adopt and release patches. Required. */
  client: Client;
}

/** Claims ControllerRevisions for a controller such as a DaemonSet (upstream `ControllerRevisionControllerRefManager`). */
export class ControllerRevisionControllerRefManager extends BaseControllerRefManager {
  readonly #client: Client;

  constructor(options: ControllerRevisionControllerRefManagerOptions) {
    super(options);
    this.#client = options.client;
  }

  /** Adopts matching orphans, releases owned revisions that stopped matching, returns the owned ones. */
  claimControllerRevisions<R extends Revision>(revisions: readonly R[]): Promise<ClaimResult<R>> {
    return this.claimAll(
      revisions,
      (revision) => this.selector.matches(revision.metadata?.labels),
      async (revision) => {
        await this.checkCanAdopt("ControllerRevision", revision);
        await this.#patch(revision, this.adoptPatch(revision.metadata?.uid ?? ""));
      },
      async (revision) => {
        try {
          await this.#patch(revision, this.releasePatch(revision.metadata?.uid ?? ""));
        } catch (error) {
          if (isNotFound(error) || isInvalid(error)) return;
          throw error;
        }
      },
    );
  }

  async #patch(revision: Revision, patch: unknown): Promise<void> {
    const meta = revision.metadata ?? {};
    await this.#client
      .resource(controllerRevisions, meta.namespace ?? "")
      .patch(meta.name ?? "", patch, { type: "strategic-merge", signal: this.signal });
  }
}
