import {
  type DeepReadonly,
  DeletedFinalStateUnknown,
  type KubeObject,
  type OwnerReference,
  type Pod,
  type ReplicaSet,
} from "@reconcile/api";
import { describe, expect, it } from "vitest";
import type { ControllerIndexer } from "./informer-types.js";
import {
  objectFromTombstone,
  ownerEventHandler,
  ownersSelecting,
  resolveControllerRef,
} from "./owner-events.js";

const rsKind = { kind: "ReplicaSet", group: "apps" };

function replicaSet(name: string, uid: string, selector?: ReplicaSet["spec"]): ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { namespace: "ns", name, uid },
    spec: selector ?? { selector: { matchLabels: { app: name } }, template: {} },
  };
}

function ref(owner: KubeObject, overrides: Partial<OwnerReference> = {}): OwnerReference {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    name: owner.metadata?.name ?? "",
    uid: owner.metadata?.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
    ...overrides,
  };
}

function pod(
  name: string,
  options: { owner?: OwnerReference; labels?: Record<string, string>; rv?: string } = {},
): Pod {
  return {
    metadata: {
      namespace: "ns",
      name,
      resourceVersion: options.rv ?? "1",
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.owner ? { ownerReferences: [options.owner] } : {}),
    },
  };
}

/** An indexer over a fixed list, with the namespace index. */
function indexer<T extends KubeObject>(...objects: T[]): ControllerIndexer<T> {
  const all = objects as DeepReadonly<T>[];
  return {
    getByKey: (key) =>
      all.find(
        (o) => `${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name}` === key,
      ),
    byIndex: (name, value) => {
      if (name !== "namespace") throw new Error(`no index ${name}`);
      return all.filter((o) => (o.metadata?.namespace ?? "") === value);
    },
    getIndexers: () => ({ namespace: true }),
    addIndexers: () => {},
  };
}

describe("resolveControllerRef", () => {
  const web = replicaSet("web", "uid-web");
  const owners = indexer(web);

  it("returns the cached owner the ref names by kind, name and uid", () => {
    expect(resolveControllerRef(owners, "ns", ref(web), rsKind)).toBe(web);
  });

  it("returns undefined for another kind, another group, another uid, an unknown name, another namespace or no ref", () => {
    expect(resolveControllerRef(owners, "ns", ref(web, { kind: "StatefulSet" }), rsKind)).toBeUndefined();
    expect(
      resolveControllerRef(owners, "ns", ref(web, { apiVersion: "example.com/v1" }), rsKind),
    ).toBeUndefined();
    expect(resolveControllerRef(owners, "ns", ref(web, { uid: "recreated" }), rsKind)).toBeUndefined();
    expect(resolveControllerRef(owners, "ns", ref(web, { name: "ghost" }), rsKind)).toBeUndefined();
    expect(resolveControllerRef(owners, "other", ref(web), rsKind)).toBeUndefined();
    expect(resolveControllerRef(owners, "ns", undefined, rsKind)).toBeUndefined();
  });

  it("compares only the kind when no group is given, as upstream's controllers do", () => {
    expect(
      resolveControllerRef(owners, "ns", ref(web, { apiVersion: "extensions/v1beta1" }), {
        kind: "ReplicaSet",
      }),
    ).toBe(web);
  });

  it("looks a cluster-scoped owner up by name alone", () => {
    const node = { apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "uid-n1" } };
    const nodeRef = { apiVersion: "v1", kind: "Node", name: "n1", uid: "uid-n1", controller: true };
    expect(resolveControllerRef(indexer(node), "", nodeRef, { kind: "Node", group: "" })).toBe(node);
  });
});

describe("objectFromTombstone", () => {
  it("returns the object itself or the last state a tombstone holds", () => {
    const p = pod("a");
    expect(objectFromTombstone(p)).toBe(p);
    expect(objectFromTombstone(new DeletedFinalStateUnknown("ns/a", p))).toBe(p);
  });
});

describe("ownerEventHandler", () => {
  const web = replicaSet("web", "uid-web");
  const api = replicaSet("api", "uid-api");

  function setup() {
    const keys: string[] = [];
    const orphansAsked: string[] = [];
    const handler = ownerEventHandler<Pod, ReplicaSet>({
      ownerKind: rsKind,
      owners: indexer(web, api),
      enqueue: (key) => keys.push(key),
      ownersOfOrphan: (child) => {
        orphansAsked.push(child.metadata?.name ?? "");
        return ownersSelecting(indexer(web, api), child);
      },
    });
    return { handler, keys, orphansAsked };
  }

  it("enqueues the owner of an added, and of a deleted child, tombstones included", () => {
    const { handler, keys } = setup();
    handler.onAdd?.(pod("a", { owner: ref(web) }), false);
    handler.onDelete?.(pod("b", { owner: ref(api) }));
    handler.onDelete?.(new DeletedFinalStateUnknown("ns/c", pod("c", { owner: ref(web) })));
    expect(keys).toEqual(["ns/web", "ns/api", "ns/web"]);
  });

  it("enqueues nothing for a child whose ref resolves to no cached owner", () => {
    const { handler, keys } = setup();
    handler.onAdd?.(pod("a", { owner: ref(web, { uid: "old" }) }), false);
    handler.onDelete?.(pod("b", { owner: ref(web, { kind: "Job" }) }));
    expect(keys).toEqual([]);
  });

  it("enqueues the adopters of an added orphan, and nobody on an orphan's deletion", () => {
    const { handler, keys, orphansAsked } = setup();
    handler.onAdd?.(pod("a", { labels: { app: "web" } }), true);
    handler.onDelete?.(pod("a", { labels: { app: "web" } }));
    expect(keys).toEqual(["ns/web"]);
    expect(orphansAsked).toEqual(["a"]);
  });

  it("on an update that moves the controllerRef, enqueues the old owner and the new one", () => {
    const { handler, keys } = setup();
    handler.onUpdate?.(pod("a", { owner: ref(web), rv: "1" }), pod("a", { owner: ref(api), rv: "2" }));
    expect(keys).toEqual(["ns/web", "ns/api"]);
  });

  it("on an update that drops the controllerRef, enqueues the old owner and the orphan's adopters", () => {
    const { handler, keys } = setup();
    handler.onUpdate?.(
      pod("a", { owner: ref(web), labels: { app: "api" }, rv: "1" }),
      pod("a", { labels: { app: "api" }, rv: "2" }),
    );
    expect(keys).toEqual(["ns/web", "ns/api"]);
  });

  it("asks for adopters of an updated orphan only when its labels changed", () => {
    const { handler, keys, orphansAsked } = setup();
    handler.onUpdate?.(
      pod("a", { labels: { app: "x" }, rv: "1" }),
      pod("a", { labels: { app: "x" }, rv: "2" }),
    );
    expect(orphansAsked).toEqual([]);
    handler.onUpdate?.(
      pod("a", { labels: { app: "x" }, rv: "2" }),
      pod("a", { labels: { app: "web" }, rv: "3" }),
    );
    expect(orphansAsked).toEqual(["a"]);
    expect(keys).toEqual(["ns/web"]);
  });

  it("ignores a resync (the same resourceVersion twice)", () => {
    const { handler, keys } = setup();
    handler.onUpdate?.(pod("a", { owner: ref(web), rv: "7" }), pod("a", { owner: ref(web), rv: "7" }));
    expect(keys).toEqual([]);
  });

  it("without ownersOfOrphan, orphans wake nobody", () => {
    const keys: string[] = [];
    const handler = ownerEventHandler<Pod, ReplicaSet>({
      ownerKind: rsKind,
      owners: indexer(web),
      enqueue: (key) => keys.push(key),
    });
    handler.onAdd?.(pod("a", { labels: { app: "web" } }), false);
    expect(keys).toEqual([]);
  });

  it("resolves cluster-scoped owners by name alone", () => {
    const keys: string[] = [];
    const node = { apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "uid-n1" } };
    const handler = ownerEventHandler<Pod, KubeObject>({
      ownerKind: { kind: "Node" },
      owners: indexer(node),
      clusterScopedOwners: true,
      enqueue: (key) => keys.push(key),
    });
    handler.onAdd?.(
      pod("a", { owner: { apiVersion: "v1", kind: "Node", name: "n1", uid: "uid-n1", controller: true } }),
      false,
    );
    expect(keys).toEqual(["n1"]);
  });
});

describe("ownersSelecting", () => {
  it("returns the owners of the child's namespace whose non-empty, valid selector matches its labels", () => {
    const web = replicaSet("web", "1");
    const everything = replicaSet("everything", "2", { selector: {}, template: {} });
    const broken = replicaSet("broken", "3", {
      selector: { matchExpressions: [{ key: "app", operator: "Bogus", values: ["web"] }] },
      template: {},
    });
    const elsewhere = { ...replicaSet("web", "4"), metadata: { namespace: "other", name: "web", uid: "4" } };
    const byExpression = replicaSet("expr", "5", {
      selector: { matchExpressions: [{ key: "app", operator: "In", values: ["web", "api"] }] },
      template: {},
    });
    const owners = indexer<ReplicaSet>(web, everything, broken, elsewhere, byExpression);
    expect(
      ownersSelecting(owners, pod("a", { labels: { app: "web" } })).map((o) => o.metadata?.name),
    ).toEqual(["web", "expr"]);
    expect(ownersSelecting(owners, pod("b"))).toEqual([]);
  });
});

function beingDeleted(p: Pod): Pod {
  return { ...p, metadata: { ...p.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } };
}

describe("ownerEventHandler with expectations to observe (upstream ReplicaSet addPod/updatePod/deletePod)", () => {
  function setup() {
    const rs = replicaSet("web", "rs-uid");
    const log: string[] = [];
    const handler = ownerEventHandler<Pod, ReplicaSet>({
      ownerKind: rsKind,
      owners: indexer(rs),
      childKind: "Pod",
      enqueue: (key, _owner, reason) => void log.push(`enqueue ${key}: ${reason}`),
      observe: {
        created: (key, child) => void log.push(`created ${key} ${child.metadata?.name}`),
        deleted: (key, child) => void log.push(`deleted ${key} ${child.metadata?.name}`),
      },
    });
    return { rs, log, handler };
  }

  it("an owned pod added is observed created, then its owner enqueued", () => {
    const { rs, log, handler } = setup();
    handler.onAdd?.(pod("p", { owner: ref(rs) }), false);
    expect(log).toEqual(["created ns/web p", "enqueue ns/web: owned Pod added"]);
  });

  it("a pod that shows up already being deleted counts as a deletion, not a creation", () => {
    const { rs, log, handler } = setup();
    handler.onAdd?.(beingDeleted(pod("p", { owner: ref(rs) })), false);
    expect(log).toEqual(["deleted ns/web p", "enqueue ns/web: owned Pod deleted"]);
  });

  it("an update that starts a graceful delete is observed as the deletion; with its labels changed the old state too", () => {
    const { rs, log, handler } = setup();
    const before = pod("p", { owner: ref(rs), labels: { app: "web" }, rv: "1" });
    const after = beingDeleted(pod("p", { owner: ref(rs), labels: { app: "other" }, rv: "2" }));
    handler.onUpdate?.(before, after);
    expect(log).toEqual([
      "deleted ns/web p",
      "enqueue ns/web: owned Pod deleted",
      "deleted ns/web p",
      "enqueue ns/web: owned Pod deleted",
    ]);
  });

  it("a deleted pod, or its tombstone, is observed deleted; an orphan's deletion concerns no one", () => {
    const { rs, log, handler } = setup();
    handler.onDelete?.(new DeletedFinalStateUnknown("ns/p", pod("p", { owner: ref(rs) })));
    handler.onDelete?.(pod("orphan"));
    expect(log).toEqual(["deleted ns/web p", "enqueue ns/web: owned Pod deleted"]);
  });

  it("without observe, a terminating pod's update is an ordinary change of its owner", () => {
    const rs = replicaSet("web", "rs-uid");
    const reasons: string[] = [];
    const handler = ownerEventHandler<Pod, ReplicaSet>({
      ownerKind: rsKind,
      owners: indexer(rs),
      enqueue: (_key, _owner, reason) => void reasons.push(reason),
    });
    const after = beingDeleted(pod("p", { owner: ref(rs), rv: "2" }));
    handler.onUpdate?.(pod("p", { owner: ref(rs), rv: "1" }), after);
    expect(reasons).toEqual(["owned object changed"]);
  });
});
