import { type ConfigMap, configMaps, isConflict, newConflict, parseSelector } from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import type { ResourceClient } from "@reconcile/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createOrPatch,
  createOrUpdate,
  mergePatchBetween,
  setControllerReference,
} from "./create-or-update.js";
import { addFinalizer, hasFinalizer, reconcileFinalizer, removeFinalizer } from "./finalizers.js";
import { generationChanged, labelSelector, labelsChanged, or, resourceVersionChanged } from "./predicates.js";
import { type Condition, setCondition, updateStatus } from "./status.js";

const t0 = new Date("2026-01-01T00:00:00Z");
const t1 = new Date("2026-01-01T00:05:00Z");

describe("setCondition (meta.SetStatusCondition)", () => {
  const ready = (status: Condition["status"], reason = "R"): Condition => ({
    type: "Ready",
    status,
    reason,
    message: "m",
  });

  it("appends a new type with the transition time", () => {
    const conditions: Condition[] = [];
    expect(setCondition(conditions, ready("True"), t0)).toBe(true);
    expect(conditions).toEqual([{ ...ready("True"), lastTransitionTime: "2026-01-01T00:00:00Z" }]);
  });

  it("keeps the transition time when only reason or message change", () => {
    const conditions: Condition[] = [];
    setCondition(conditions, ready("True"), t0);
    expect(setCondition(conditions, ready("True", "Other"), t1)).toBe(true);
    expect(conditions[0]).toEqual({ ...ready("True", "Other"), lastTransitionTime: "2026-01-01T00:00:00Z" });
  });

  it("moves the transition time when the status changes, and reports no change for the same condition", () => {
    const conditions: Condition[] = [];
    setCondition(conditions, ready("True"), t0);
    expect(setCondition(conditions, ready("True"), t1)).toBe(false);
    expect(setCondition(conditions, ready("False"), t1)).toBe(true);
    expect(conditions[0]?.lastTransitionTime).toBe("2026-01-01T00:05:00Z");
  });
});

describe("mergePatchBetween", () => {
  it.each([
    [{ a: 1 }, { a: 1 }, undefined],
    [{ a: 1 }, { a: 2 }, { a: 2 }],
    [{ a: 1, b: 2 }, { a: 1 }, { b: null }],
    [{ m: { x: 1, y: 2 } }, { m: { x: 1, y: 3 } }, { m: { y: 3 } }],
    [{ l: [1, 2] }, { l: [1] }, { l: [1] }],
    [{}, { n: { deep: true } }, { n: { deep: true } }],
  ])("%j → %j is %j", (from, to, patch) => {
    expect(mergePatchBetween(from, to)).toEqual(patch);
  });
});

describe("predicates", () => {
  const cm = (generation: number, labels: Record<string, string>, rv: string): ConfigMap => ({
    metadata: { name: "a", generation, labels, resourceVersion: rv },
  });
  it("generationChanged passes only a new generation", () => {
    const p = generationChanged<ConfigMap>();
    expect(p.update?.(cm(1, {}, "1"), cm(1, {}, "2"))).toBe(false);
    expect(p.update?.(cm(1, {}, "1"), cm(2, {}, "2"))).toBe(true);
    expect(p.create).toBeUndefined();
  });
  it("labelsChanged, resourceVersionChanged, labelSelector and or", () => {
    expect(labelsChanged<ConfigMap>().update?.(cm(1, { a: "1" }, "1"), cm(1, { a: "1" }, "2"))).toBe(false);
    expect(labelsChanged<ConfigMap>().update?.(cm(1, { a: "1" }, "1"), cm(1, { a: "2" }, "2"))).toBe(true);
    expect(resourceVersionChanged<ConfigMap>().update?.(cm(1, {}, "1"), cm(1, {}, "1"))).toBe(false);
    const selected = labelSelector<ConfigMap>(parseSelector("tier=web"));
    expect(selected.create?.(cm(1, { tier: "web" }, "1"))).toBe(true);
    expect(selected.delete?.(cm(1, { tier: "db" }, "1"))).toBe(false);
    const either = or<ConfigMap>(generationChanged(), labelsChanged());
    expect(either.update?.(cm(1, {}, "1"), cm(1, {}, "2"))).toBe(false);
    expect(either.update?.(cm(1, {}, "1"), cm(1, { x: "y" }, "2"))).toBe(true);
  });
});

describe("setControllerReference", () => {
  const owner: ConfigMap = { metadata: { name: "owner", namespace: "a", uid: "u1" } };
  it("appends a controllerRef, and refreshes it for the same owner", () => {
    const child: ConfigMap = { metadata: { name: "c", namespace: "a" } };
    setControllerReference(owner, configMaps, child);
    setControllerReference(owner, configMaps, child);
    expect(child.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "owner",
        uid: "u1",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });
  it("refuses a second controller and a cross-namespace owner", () => {
    const child: ConfigMap = { metadata: { name: "c", namespace: "a" } };
    setControllerReference(owner, configMaps, child);
    expect(() =>
      setControllerReference({ metadata: { name: "x", namespace: "a", uid: "u2" } }, configMaps, child),
    ).toThrow("c is already controlled by ConfigMap owner (uid u1)");
    expect(() =>
      setControllerReference(owner, configMaps, { metadata: { name: "c", namespace: "b" } }),
    ).toThrow(
      'cross-namespace owner references are disallowed: ConfigMap a/owner cannot own an object in namespace "b"',
    );
  });
});

describe("helpers against the API server", () => {
  let server: ApiServer;
  let cms: ResourceClient<ConfigMap>;
  beforeEach(() => {
    server = new ApiServer();
    cms = server.client().resource(configMaps, "default");
  });
  afterEach(() => server.close());

  it("createOrUpdate creates, then updates only on a change", async () => {
    const fill = (value: string) => (cm: ConfigMap) => {
      cm.data = { k: value };
    };
    const created = await createOrUpdate(cms, { metadata: { name: "x", namespace: "default" } }, fill("1"));
    expect(created.result).toBe("created");
    const same = await createOrUpdate(cms, { metadata: { name: "x", namespace: "default" } }, fill("1"));
    expect(same.result).toBe("unchanged");
    expect(same.object.metadata?.resourceVersion).toBe(created.object.metadata?.resourceVersion);
    const updated = await createOrUpdate(cms, { metadata: { name: "x", namespace: "default" } }, fill("2"));
    expect(updated.result).toBe("updated");
    expect((await cms.get("x")).data).toEqual({ k: "2" });
  });

  it("createOrPatch keeps what others wrote in the meantime", async () => {
    await cms.create({ metadata: { name: "x", namespace: "default" }, data: { ours: "1", theirs: "1" } });
    const result = await createOrPatch(cms, { metadata: { name: "x", namespace: "default" } }, (cm) => {
      cm.data = { ...cm.data, ours: "2" };
    });
    expect(result.result).toBe("updated");
    expect((await cms.get("x")).data).toEqual({ ours: "2", theirs: "1" });
  });

  it("finalizers: add once, remove, and the patch is conditional on the resourceVersion", async () => {
    const cm = await cms.create({ metadata: { name: "x", namespace: "default" } });
    const added = await addFinalizer(cms, cm, "example.com/f");
    expect(added.metadata?.finalizers).toEqual(["example.com/f"]);
    expect(await addFinalizer(cms, added, "example.com/f")).toBe(added);
    const stale = structuredClone(added) as unknown as ConfigMap;
    stale.metadata = { ...stale.metadata, resourceVersion: cm.metadata!.resourceVersion! };
    await expect(removeFinalizer(cms, stale, "example.com/f")).rejects.toSatisfy(isConflict);
    const removed = await removeFinalizer(cms, added, "example.com/f");
    expect(hasFinalizer(removed, "example.com/f")).toBe(false);
  });

  it("reconcileFinalizer adds, then on deletion runs cleanup before removing it, and the object goes", async () => {
    const cm = await cms.create({ metadata: { name: "x", namespace: "default" } });
    const cleaned: string[] = [];
    const cleanup = async (obj: { metadata?: { name?: string } }) => {
      cleaned.push(obj.metadata?.name ?? "");
    };
    expect(await reconcileFinalizer(cms, cm, "example.com/f", cleanup)).toBe("added");
    expect(await reconcileFinalizer(cms, await cms.get("x"), "example.com/f", cleanup)).toBe("present");
    await cms.delete("x");
    const deleting = await cms.get("x");
    expect(deleting.metadata?.deletionTimestamp).toBeDefined();
    expect(cleaned).toEqual([]);
    expect(await reconcileFinalizer(cms, deleting, "example.com/f", cleanup)).toBe("finalized");
    expect(cleaned).toEqual(["x"]);
    await expect(cms.get("x")).rejects.toThrow('configmaps "x" not found');
  });

  it("a failing cleanup keeps the finalizer", async () => {
    await cms.create({ metadata: { name: "x", namespace: "default", finalizers: ["example.com/f"] } });
    await cms.delete("x");
    const failing = async () => {
      throw new Error("cannot reach the DNS provider");
    };
    await expect(reconcileFinalizer(cms, await cms.get("x"), "example.com/f", failing)).rejects.toThrow(
      "cannot reach the DNS provider",
    );
    expect((await cms.get("x")).metadata?.finalizers).toEqual(["example.com/f"]);
  });

  it("updateStatus retries a 409 Conflict on a fresh read, and gives up after the attempts", async () => {
    await cms.create({ metadata: { name: "x", namespace: "default" }, data: { a: "1" } });
    let conflicts = 2;
    // ConfigMaps have no status subresource: the stand-in writes the whole object.
    const flaky = {
      get: (name: string) => cms.get(name),
      updateStatus: (obj: ConfigMap) => {
        if (conflicts-- > 0)
          return Promise.reject(newConflict({ group: "", resource: "configmaps" }, "x", "changed"));
        return cms.update(obj);
      },
    } as unknown as ResourceClient<ConfigMap>;
    const written = await updateStatus(flaky, "x", (cm) => {
      cm.data = { a: "2" };
      (cm as { status?: unknown }).status = { seen: true };
    });
    expect(written.data).toEqual({ a: "2" });
    conflicts = 10;
    await expect(
      updateStatus(
        flaky,
        "x",
        (cm) => {
          (cm as { status?: unknown }).status = { seen: false };
        },
        { attempts: 3 },
      ),
    ).rejects.toSatisfy(isConflict);
    expect(conflicts).toBe(7);
  });

  it("updateStatus writes nothing when mutate changes nothing", async () => {
    const cm = await cms.create({ metadata: { name: "x", namespace: "default" } });
    const same = await updateStatus(cms, "x", () => {});
    expect(same.metadata?.resourceVersion).toBe(cm.metadata?.resourceVersion);
  });
});
