import { StatusError } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import {
  applyConfiguration,
  capUpdateManagers,
  decodeManagedFields,
  type FieldManager,
  FieldSet,
  managerFromUserAgent,
  trackUpdate,
  validateFieldManager,
} from "./index.js";
import { identity } from "./managed-fields-entries.js";

type Obj = Record<string, unknown>;
const t0 = new Date("2024-01-02T00:00:00.000Z");
const t1 = new Date("2024-01-02T00:00:01.500Z");

function deployment(spec: Obj = {}, labels: Record<string, string> = { app: "web" }): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default", labels },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "nginx", image: "nginx:1.25", ports: [{ containerPort: 80 }] }] },
      },
      ...spec,
    },
  };
}

function configMap(data: Record<string, string>, extra: Obj = {}): Obj {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "cm", namespace: "default", ...extra },
    data,
  };
}

function managedFields(object: Obj): Array<Record<string, unknown>> {
  return ((object.metadata as Obj).managedFields ?? []) as Array<Record<string, unknown>>;
}

function apply(live: Obj | undefined, config: Obj, manager: string, force = false, now = t0): Obj {
  return applyConfiguration({ live, config, manager, apiVersion: String(config.apiVersion), force, now });
}

function update(before: Obj | undefined, after: Obj, manager: string, now = t0): Obj {
  return trackUpdate({ before, after, manager, apiVersion: String(after.apiVersion), now });
}

function conflictOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (error) {
    if (error instanceof StatusError) return error;
    throw error;
  }
  throw new Error("expected a conflict");
}

describe("applyConfiguration", () => {
  it("records what kubectl apply --server-side of a Deployment owns, in upstream's exact FieldsV1", () => {
    const created = apply(undefined, deployment(), "kubectl");
    expect(managedFields(created)).toEqual([
      {
        manager: "kubectl",
        operation: "Apply",
        apiVersion: "apps/v1",
        time: "2024-01-02T00:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": { "f:labels": { "f:app": {} } },
          "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
              "f:metadata": { "f:labels": { "f:app": {} } },
              "f:spec": {
                "f:containers": {
                  'k:{"name":"nginx"}': {
                    ".": {},
                    "f:image": {},
                    "f:name": {},
                    "f:ports": {
                      'k:{"containerPort":80,"protocol":"TCP"}': { ".": {}, "f:containerPort": {} },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ]);
  });

  it("keeps no managedFields for a configuration of only name and namespace", () => {
    const created = apply(
      undefined,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: "default" } },
      "m",
    );
    expect((created.metadata as Obj).managedFields).toBeUndefined();
  });

  it("answers 409 naming the field and its Update manager when another manager owns a value it changes", () => {
    const created = update(undefined, deployment(), "kubectl-client-side-apply");
    const error = conflictOf(() => apply(created, deployment({ replicas: 5 }), "kubectl"));
    expect(error.status).toMatchObject({
      code: 409,
      reason: "Conflict",
      message:
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas',
      details: {
        causes: [
          {
            reason: "FieldManagerConflict",
            message: 'conflict with "kubectl-client-side-apply" using apps/v1',
            field: ".spec.replicas",
          },
        ],
      },
    });
  });

  it("lists several conflicts per manager, sorted, with the plural wording", () => {
    let live = apply(undefined, configMap({ x: "1" }), "a");
    live = update(live, configMap({ x: "1", y: "1", z: "1" }), "b");
    const error = conflictOf(() => apply(live, configMap({ x: "2", y: "2", z: "2" }), "c"));
    expect(error.message).toBe(
      'Apply failed with 3 conflicts: conflicts with "a":\n- .data.x\nconflicts with "b" using v1:\n- .data.y\n- .data.z',
    );
    expect(error.details?.causes?.map((c) => c.field)).toEqual([".data.x", ".data.y", ".data.z"]);
  });

  it("names a subresource manager as upstream does", () => {
    const live = trackUpdate({
      before: update(undefined, configMap({ a: "1" }), "creator"),
      after: configMap({ a: "2" }),
      manager: "m",
      apiVersion: "v1",
      now: t0,
      subresource: "status",
    });
    expect(conflictOf(() => apply(live, configMap({ a: "3" }), "n")).message).toBe(
      'Apply failed with 1 conflict: conflict with "m" with subresource "status" using v1: .data.a',
    );
  });

  it("lets two appliers share a field they set to the same value, and re-applying an unchanged value never conflicts", () => {
    let live = apply(undefined, configMap({ a: "1" }), "one");
    live = apply(live, configMap({ a: "1" }), "two");
    // The second applier changed nothing in the object: its entry gets no time, which sorts first.
    expect(managedFields(live).map((e) => [e.manager, e.time, e.fieldsV1])).toEqual([
      ["two", undefined, { "f:data": { "f:a": {} } }],
      ["one", "2024-01-02T00:00:00Z", { "f:data": { "f:a": {} } }],
    ]);
    expect(() => apply(live, configMap({ a: "1" }), "one", false, t1)).not.toThrow();
  });

  it("with force takes the conflicting fields from their owner, who keeps the rest", () => {
    let live = update(undefined, configMap({ a: "1", b: "1" }), "owner");
    live = apply(live, configMap({ a: "2" }), "applier", true);
    expect(live.data).toEqual({ a: "2", b: "1" });
    expect(managedFields(live).map((e) => [e.manager, e.operation, e.fieldsV1])).toEqual([
      ["applier", "Apply", { "f:data": { "f:a": {} } }],
      ["owner", "Update", { "f:data": { ".": {}, "f:b": {} } }],
    ]);
  });

  it("removes a field the applier owned alone once it drops it from its configuration", () => {
    let live = apply(undefined, configMap({ a: "1", b: "1" }), "m");
    live = apply(live, configMap({ a: "1" }), "m", false, t1);
    expect(live.data).toEqual({ a: "1" });
    expect(managedFields(live)[0]).toMatchObject({
      time: "2024-01-02T00:00:01Z",
      fieldsV1: { "f:data": { "f:a": {} } },
    });
  });

  it("keeps a dropped field that another manager also owns", () => {
    let live = apply(undefined, configMap({ a: "1", b: "1" }), "m");
    live = apply(live, configMap({ b: "1" }), "other");
    live = apply(live, configMap({ a: "1" }), "m");
    expect(live.data).toEqual({ a: "1", b: "1" });
    expect(managedFields(live).map((e) => [e.manager, e.fieldsV1])).toEqual([
      ["other", { "f:data": { "f:b": {} } }],
      ["m", { "f:data": { "f:a": {} } }],
    ]);
  });

  it("leaves a dropped field alone once an update took it over (ownership moves on update)", () => {
    let live = apply(undefined, configMap({ a: "1", b: "1" }), "m");
    live = update(live, configMap({ a: "1", b: "2" }), "kubectl-edit");
    expect(managedFields(live).map((e) => [e.manager, e.fieldsV1])).toEqual([
      ["m", { "f:data": { "f:a": {} } }],
      ["kubectl-edit", { "f:data": { "f:b": {} } }],
    ]);
    live = apply(live, configMap({ a: "1" }), "m");
    expect(live.data).toEqual({ a: "1", b: "2" });
  });

  it("with an empty configuration removes everything the applier owned alone and deletes its entry", () => {
    let live = apply(undefined, configMap({ a: "1" }, { labels: { x: "y" } }), "m");
    live = apply(
      live,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: "default" } },
      "m",
    );
    expect(live).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cm", namespace: "default", labels: {} },
      data: {},
    });
    expect((live.metadata as Obj).managedFields).toBeUndefined();
  });

  it("removes a container another manager owns only a field of (map keys and list items get no protection)", () => {
    const two = deployment();
    ((two.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers.push({
      name: "sidecar",
      image: "busybox",
    });
    let live = apply(undefined, two, "m");
    const edited = structuredClone(live);
    ((edited.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers[1]!.workingDir =
      "/tmp";
    live = update(live, edited, "controller");
    live = apply(live, deployment(), "m");
    const containers = ((live.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers;
    expect(containers.map((c) => c.name)).toEqual(["nginx"]);
    expect(managedFields(live).map((e) => e.manager)).toEqual(["m"]);
  });

  it("keeps a declared struct under which another manager still owns a field", () => {
    let live = apply(undefined, deployment({ strategy: { type: "Recreate" } }), "m");
    const edited = structuredClone(live);
    (edited.spec as { strategy: Obj }).strategy.rollingUpdate = { maxSurge: 1 };
    (edited.spec as { strategy: Obj }).strategy.type = "RollingUpdate";
    live = update(live, edited, "other");
    live = apply(live, deployment(), "m");
    expect((live.spec as Obj).strategy).toEqual({ type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } });
  });

  it("merges keyed lists by key: config order for its items, a live-only item where the walk over live meets it", () => {
    const withPorts = (ports: Obj[]) =>
      ({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "s", namespace: "default" },
        spec: { ports },
      }) as Obj;
    let live = update(undefined, withPorts([{ port: 1 }, { port: 2 }, { port: 3 }]), "creator");
    live = apply(live, withPorts([{ port: 3, name: "c" }, { port: 4 }, { port: 1, name: "a" }]), "m");
    expect((live.spec as { ports: Obj[] }).ports).toEqual([
      { port: 2 },
      { port: 3, name: "c" },
      { port: 4 },
      { port: 1, name: "a" },
    ]);
  });

  it("owns set items by value and an atomic selector as a whole", () => {
    const live = apply(
      undefined,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "cm", namespace: "default", finalizers: ["example.com/a"] },
      },
      "m",
    );
    expect(managedFields(live)[0]!.fieldsV1).toEqual({
      "f:metadata": { "f:finalizers": { 'v:"example.com/a"': {} } },
    });
  });

  it("answers 500 for duplicate keys in an applied keyed list, as upstream's typed-patch error", () => {
    const config = deployment();
    ((config.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers.push({
      name: "nginx",
    });
    const error = conflictOf(() => apply(undefined, config, "m"));
    expect(error.status.code).toBe(500);
    expect(error.message).toBe(
      'failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name="nginx"]',
    );
  });

  it("returns the live object untouched when the apply changes nothing", () => {
    const live = apply(undefined, configMap({ a: "1" }), "m");
    expect(apply(live, configMap({ a: "1" }), "m", false, t1)).toEqual(live);
  });

  it("never owns a reset path (status on a main resource)", () => {
    const config = { ...deployment(), status: { replicas: 9 } };
    const live = applyConfiguration({
      live: undefined,
      config,
      manager: "m",
      apiVersion: "apps/v1",
      now: t0,
      resetFields: [["status"]],
    });
    expect(JSON.stringify(managedFields(live)[0]!.fieldsV1)).not.toContain("status");
  });

  it("attributes existing fields to before-first-apply when tracking was reset", () => {
    const live = configMap({ a: "1" });
    const error = conflictOf(() => apply(live, configMap({ a: "2" }), "m"));
    expect(error.message).toBe(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
    );
  });
});

describe("trackUpdate", () => {
  it("leaves the members the caller names unchanged out of the comparison", () => {
    const created = update(undefined, deployment(), "creator");
    const status = { ...created, status: { replicas: 3 } };
    // The spec differs here only to show it is not compared: a store names what it put back as stored.
    const after = { ...status, spec: { ...(created.spec as Obj), replicas: 5 } };
    const written = trackUpdate({
      before: created,
      after,
      manager: "kubelet",
      apiVersion: "apps/v1",
      now: t0,
      subresource: "status",
      unchanged: (member) => member === "spec",
    });
    expect(managedFields(written).map((entry) => [entry.manager, entry.fieldsV1])).toEqual([
      ["creator", managedFields(created)[0]!.fieldsV1],
      // status exists in the zero value, so it is no member itself.
      ["kubelet", { "f:status": { "f:replicas": {} } }],
    ]);
    // Without it, the write's spec change takes the replicas from the creator.
    const compared = trackUpdate({
      before: created,
      after,
      manager: "kubelet",
      apiVersion: "apps/v1",
      now: t0,
    });
    expect(JSON.stringify(managedFields(compared)[0]!.fieldsV1)).not.toContain("f:replicas");
  });

  it("records a create as upstream does: the creator owns every field, new non-zero-value nodes carry '.'", () => {
    const defaulted = deployment({
      progressDeadlineSeconds: 600,
      revisionHistoryLimit: 10,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
    });
    const podSpec = ((defaulted.spec as Obj).template as { spec: Obj }).spec;
    Object.assign(podSpec, {
      dnsPolicy: "ClusterFirst",
      restartPolicy: "Always",
      schedulerName: "default-scheduler",
      securityContext: {},
      terminationGracePeriodSeconds: 30,
    });
    Object.assign((podSpec.containers as Obj[])[0]!, {
      imagePullPolicy: "IfNotPresent",
      resources: {},
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
    });
    ((podSpec.containers as Obj[])[0]!.ports as Obj[])[0]!.protocol = "TCP";
    const created = update(undefined, defaulted, "kubectl-create");
    expect(managedFields(created)[0]!.fieldsV1).toEqual({
      "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
      "f:spec": {
        "f:progressDeadlineSeconds": {},
        "f:replicas": {},
        "f:revisionHistoryLimit": {},
        "f:selector": {},
        "f:strategy": {
          "f:rollingUpdate": { ".": {}, "f:maxSurge": {}, "f:maxUnavailable": {} },
          "f:type": {},
        },
        "f:template": {
          "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
          "f:spec": {
            "f:containers": {
              'k:{"name":"nginx"}': {
                ".": {},
                "f:image": {},
                "f:imagePullPolicy": {},
                "f:name": {},
                "f:ports": {
                  ".": {},
                  'k:{"containerPort":80,"protocol":"TCP"}': {
                    ".": {},
                    "f:containerPort": {},
                    "f:protocol": {},
                  },
                },
                "f:resources": {},
                "f:terminationMessagePath": {},
                "f:terminationMessagePolicy": {},
              },
            },
            "f:dnsPolicy": {},
            "f:restartPolicy": {},
            "f:schedulerName": {},
            "f:securityContext": {},
            "f:terminationGracePeriodSeconds": {},
          },
        },
      },
    });
    expect(Object.keys(managedFields(created)[0]!)).toEqual([
      "manager",
      "operation",
      "apiVersion",
      "time",
      "fieldsType",
      "fieldsV1",
    ]);
  });

  it("adds no entry for an update that changes nothing", () => {
    const live = update(undefined, configMap({ a: "1" }), "creator");
    expect(update(live, structuredClone(live), "other", t1)).toEqual(live);
  });

  it("takes the fields it changes or removes from every other manager", () => {
    let live = apply(undefined, configMap({ a: "1", b: "1" }), "applier");
    live = update(live, configMap({ a: "1" }), "remover");
    expect(managedFields(live).map((e) => [e.manager, e.fieldsV1])).toEqual([
      ["applier", { "f:data": { "f:a": {} } }],
    ]);
  });

  it("uses managedFields the request sends, and clears tracking on an empty list", () => {
    const live = update(undefined, configMap({ a: "1" }), "creator");
    const renamed = structuredClone(live);
    managedFields(renamed)[0]!.manager = "renamed";
    expect(managedFields(update(live, renamed, "x")).map((e) => e.manager)).toEqual(["renamed"]);
    const cleared = { ...live, metadata: { ...(live.metadata as Obj), managedFields: [] } };
    const reset = update(live, cleared, "x");
    expect((reset.metadata as Obj).managedFields).toBeUndefined();
    // While the list stays empty, updates are not tracked.
    expect((update(reset, configMap({ a: "2" }), "x").metadata as Obj).managedFields).toBeUndefined();
  });

  it("keeps the live list when the request's managedFields cannot be decoded", () => {
    const live = update(undefined, configMap({ a: "1" }), "creator");
    const bad = structuredClone(live);
    managedFields(bad)[0]!.operation = "Bogus";
    expect(managedFields(update(live, bad, "x")).map((e) => e.manager)).toEqual(["creator"]);
  });

  it("folds the oldest updates into ancient-changes past ten Update managers", () => {
    let live = apply(undefined, configMap({}, { labels: { base: "x" } }), "applier");
    for (let i = 0; i < 20; i++) {
      const next = structuredClone(live);
      ((next.metadata as Obj).labels as Record<string, string>)[`l${i}`] = "v";
      live = update(live, next, `m${i}`, new Date(t0.getTime() + (i + 1) * 1000));
    }
    const entries = managedFields(live);
    expect(entries).toHaveLength(11);
    expect(entries[0]!.manager).toBe("applier");
    expect(entries[1]!.manager).toBe("ancient-changes");
    expect(entries.slice(2).map((e) => e.manager)).toEqual([
      "m11",
      "m12",
      "m13",
      "m14",
      "m15",
      "m16",
      "m17",
      "m18",
      "m19",
    ]);
    expect(
      Object.keys(((entries[1]!.fieldsV1 as Obj)["f:metadata"] as { "f:labels": Obj })["f:labels"]).sort(),
    ).toEqual(["f:l0", "f:l1", "f:l10", "f:l2", "f:l3", "f:l4", "f:l5", "f:l6", "f:l7", "f:l8", "f:l9"]);
  });
});

describe("capUpdateManagers", () => {
  it("leaves ten Update managers alone", () => {
    const managers: FieldManager[] = Array.from({ length: 10 }, (_, i) => ({
      manager: `m${i}`,
      operation: "Update",
      apiVersion: "v1",
      subresource: "",
      fields: new FieldSet().insert([`f:${i}`]),
    }));
    expect(capUpdateManagers(managers)).toBe(managers);
  });
});

describe("decodeManagedFields", () => {
  it("keeps the last of two entries with the same identity, without uniting their sets", () => {
    const decoded = decodeManagedFields([
      { manager: "m", operation: "Apply", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "f:a": {} } },
      { manager: "m", operation: "Apply", apiVersion: "v2", fieldsType: "FieldsV1", fieldsV1: { "f:b": {} } },
    ]);
    expect(decoded).toHaveLength(1);
    expect(decoded[0]!.fields.paths()).toEqual([["f:b"]]);
  });

  it.each([
    [
      { manager: "m", operation: "Patch", apiVersion: "v1", fieldsType: "FieldsV1" },
      "operation must be Apply or Update",
    ],
    [{ manager: "m", operation: "Apply", fieldsType: "FieldsV1" }, "apiVersion must not be empty"],
    [{ manager: "m", operation: "Apply", apiVersion: "v1" }, "fieldsType must be FieldsV1"],
  ])("refuses %j", (entry, message) => {
    expect(() => decodeManagedFields([entry])).toThrow(message);
  });
});

describe("manager names", () => {
  it.each([
    ["kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07", "kubectl"],
    [
      "kube-controller-manager/v1.32.0 (linux/amd64) kubernetes/abc/system:serviceaccount:x",
      "kube-controller-manager",
    ],
    ["curl/8.5.0", "curl"],
    [undefined, "unknown"],
    ["", "unknown"],
    ["\u0001/x", "unknown"],
    ["a".repeat(200), "a".repeat(128)],
  ])("the user agent %j gives %j", (userAgent, manager) => {
    expect(managerFromUserAgent(userAgent)).toBe(manager);
  });

  it("requires fieldManager for apply only, with kube-apiserver's 422", () => {
    expect(validateFieldManager(undefined, "PatchOptions")).toBeUndefined();
    expect(validateFieldManager("", "PatchOptions", true)?.status).toMatchObject({
      code: 422,
      reason: "Invalid",
      message:
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      details: {
        group: "meta.k8s.io",
        kind: "PatchOptions",
        causes: [{ reason: "FieldValueRequired", field: "fieldManager" }],
      },
    });
  });

  it("refuses names over 128 bytes and non-printable characters", () => {
    expect(validateFieldManager("é".repeat(65), "UpdateOptions")?.message).toBe(
      'UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
    );
    expect(validateFieldManager("a\u0001", "CreateOptions")?.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\x01": invalid character U+0001 (at position 1)',
    );
    expect(validateFieldManager("Mgr 1/x_é", "CreateOptions")).toBeUndefined();
  });
});

describe("identity", () => {
  it("is the JSON of the manager, operation, an Update's apiVersion and the subresource, in that order", () => {
    const cases = [
      { manager: "kubectl", operation: "Update", apiVersion: "v1", subresource: "" },
      { manager: "kubectl", operation: "Apply", apiVersion: "v1", subresource: "" },
      {
        manager: 'a "quoted" \\ name\u2028',
        operation: "Update",
        apiVersion: "apps/v1",
        subresource: "status",
      },
    ] as const;
    expect(cases.map(identity)).toEqual([
      '{"manager":"kubectl","operation":"Update","apiVersion":"v1"}',
      '{"manager":"kubectl","operation":"Apply"}',
      JSON.stringify({
        manager: 'a "quoted" \\ name\u2028',
        operation: "Update",
        apiVersion: "apps/v1",
        subresource: "status",
      }),
    ]);
  });
});
