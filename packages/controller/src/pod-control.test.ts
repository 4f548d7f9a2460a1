import {
  newForbidden,
  newInternalError,
  newNotFound,
  type OwnerReference,
  type Pod,
  type PodTemplateSpec,
  pods,
  StatusError,
} from "@reconcile/api";
import type { Client, DeleteOptions, PatchOptions, WriteOptions } from "@reconcile/client";
import { describe, expect, it } from "vitest";
import { ClientPodControl, getPodFromTemplate, validateControllerRef } from "./pod-control.js";
import { FakeEventRecorder } from "./testing/fake-event-recorder.js";
import { RecordingClient } from "./testing/recording-client.js";

const rs = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name: "web", namespace: "prod", uid: "rs-1" },
};
const controllerRef: OwnerReference = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  name: "web",
  uid: "rs-1",
  controller: true,
  blockOwnerDeletion: true,
};
const template: PodTemplateSpec = {
  metadata: {
    labels: { app: "web" },
    annotations: { note: "x" },
    finalizers: ["example.com/keep"],
    ownerReferences: [{ apiVersion: "v1", kind: "Other", name: "o", uid: "o" }],
  },
  spec: { containers: [{ name: "c", image: "nginx" }] },
};

function setup() {
  const client = new RecordingClient();
  const recorder = new FakeEventRecorder();
  return { client, recorder, control: new ClientPodControl({ client, recorder }) };
}

describe("getPodFromTemplate", () => {
  it("copies labels, annotations, finalizers and spec, and appends the controllerRef", () => {
    const pod = getPodFromTemplate(template, rs, controllerRef);
    expect(pod).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        labels: { app: "web" },
        annotations: { note: "x" },
        generateName: "web-",
        finalizers: ["example.com/keep"],
        ownerReferences: [controllerRef],
      },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    });
    expect(pod.spec).not.toBe(template.spec);
  });

  it("leaves out labels and annotations the template does not have, as upstream's encoding omits empty maps", () => {
    const bare = { spec: { containers: [{ name: "c", image: "nginx" }] } };
    const pod = getPodFromTemplate(bare, rs, controllerRef);
    expect(pod.metadata).toEqual({ generateName: "web-", ownerReferences: [controllerRef] });
  });

  it("falls back to the bare name when the dashed prefix is not a valid name", () => {
    const pod = getPodFromTemplate(template, { metadata: { name: "Web" } }, undefined);
    expect(pod.metadata?.generateName).toBe("Web");
    expect(pod.metadata?.ownerReferences).toBeUndefined();
  });
});

describe("validateControllerRef", () => {
  it.each([
    [undefined, "controllerRef is nil"],
    [{ ...controllerRef, apiVersion: "" }, "controllerRef has empty APIVersion"],
    [{ ...controllerRef, kind: "" }, "controllerRef has empty Kind"],
    [{ ...controllerRef, controller: false }, "controllerRef.Controller is not set to true"],
    [{ ...controllerRef, blockOwnerDeletion: undefined }, "controllerRef.BlockOwnerDeletion is not set"],
  ])("rejects %j", (ref, message) => {
    expect(() => validateControllerRef(ref as OwnerReference | undefined)).toThrow(message);
  });
});

describe("ClientPodControl", () => {
  it("creates a pod in the namespace and records SuccessfulCreate", async () => {
    const { client, recorder, control } = setup();
    await control.createPods("prod", template, rs, controllerRef);
    const [create] = client.actionsOf("create", "pods");
    expect(create?.namespace).toBe("prod");
    const created = client.peek(pods, "prod", create!.name) as Pod;
    expect(created.metadata?.name).toMatch(/^web-/);
    expect(created.metadata?.ownerReferences).toEqual([controllerRef]);
    expect(recorder.events).toEqual([`Normal SuccessfulCreate Created pod: ${create!.name}`]);
  });

  it("uses an explicit generateName", async () => {
    const { client, control } = setup();
    await control.createPodsWithGenerateName("prod", template, rs, controllerRef, "custom-");
    expect(client.actionsOf("create", "pods")[0]?.name).toMatch(/^custom-/);
  });

  it("refuses a template without labels and makes no call", async () => {
    const { client, control } = setup();
    await expect(control.createPods("prod", { spec: { containers: [] } }, rs, controllerRef)).rejects.toThrow(
      "unable to create pods, no labels",
    );
    expect(client.actions).toEqual([]);
  });

  it("refuses an invalid controllerRef and makes no call", async () => {
    const { client, control } = setup();
    await expect(
      control.createPods("prod", template, rs, { ...controllerRef, controller: false }),
    ).rejects.toThrow("controllerRef.Controller is not set to true");
    expect(client.actions).toEqual([]);
  });

  it("records FailedCreate and rethrows the API error", async () => {
    const { client, recorder, control } = setup();
    const quota = newForbidden({ group: "", resource: "pods" }, "web-x", "exceeded quota");
    client.reactors.push(() => quota);
    await expect(control.createPods("prod", template, rs, controllerRef)).rejects.toBe(quota);
    expect(recorder.events).toEqual([`Warning FailedCreate Error creating: ${quota.message}`]);
  });

  it("records nothing when the namespace is terminating", async () => {
    const { client, recorder, control } = setup();
    const terminating = new StatusError({
      code: 403,
      reason: "Forbidden",
      message: "unable to create new content in namespace prod because it is being terminated",
      details: {
        causes: [{ reason: "NamespaceTerminating", message: "namespace prod is being terminated" }],
      },
    });
    client.reactors.push(() => terminating);
    await expect(control.createPods("prod", template, rs, controllerRef)).rejects.toBe(terminating);
    expect(recorder.events).toEqual([]);
  });

  it("deletes a pod and records SuccessfulDelete", async () => {
    const { client, recorder, control } = setup();
    client.seed(pods, { metadata: { name: "web-1", namespace: "prod" } });
    await control.deletePod("prod", "web-1", rs);
    expect(client.peek(pods, "prod", "web-1")).toBeUndefined();
    expect(recorder.events).toEqual(["Normal SuccessfulDelete Deleted pod: web-1"]);
  });

  it("passes NotFound through on delete without an event", async () => {
    const { recorder, control } = setup();
    const error = await control.deletePod("prod", "gone", rs).catch((e: unknown) => e);
    expect(StatusError.isInstance(error) && error.reason).toBe("NotFound");
    expect(recorder.events).toEqual([]);
  });

  it("wraps other delete errors and records FailedDelete", async () => {
    const { client, recorder, control } = setup();
    client.seed(pods, { metadata: { name: "web-1", namespace: "prod" } });
    const boom = newInternalError("etcd down");
    client.reactors.push(() => boom);
    const error = (await control.deletePod("prod", "web-1", rs).catch((e: unknown) => e)) as Error;
    expect(error.message).toBe(`unable to delete pods: ${boom.message}`);
    expect(error.cause).toBe(boom);
    expect(recorder.events).toEqual([`Warning FailedDelete Error deleting: ${boom.message}`]);
  });

  it("patches with a strategic-merge patch", async () => {
    const { client, control } = setup();
    client.seed(pods, { metadata: { name: "web-1", namespace: "prod", labels: { a: "1" } } });
    await control.patchPod("prod", "web-1", { metadata: { labels: { b: "2" } } });
    expect(client.actionsOf("patch", "pods")[0]?.patchType).toBe("strategic-merge");
    expect(client.peek(pods, "prod", "web-1")?.metadata?.labels).toEqual({ a: "1", b: "2" });
    await expect(control.patchPod("prod", "nope", {})).rejects.toThrow(
      newNotFound({ group: "", resource: "pods" }, "nope").message,
    );
  });
});

describe("ClientPodControl with a signal", () => {
  /** A client whose pod calls wait until aborted, recording the signal each call got. */
  function hangingClient() {
    const base = new RecordingClient();
    const signals: (AbortSignal | undefined)[] = [];
    const hang = (options: { signal?: AbortSignal | undefined } | undefined) => {
      signals.push(options?.signal);
      const signal = options?.signal;
      return new Promise<never>((_resolve, reject) => {
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    };
    const client: Client = {
      resource: (resource, namespace) => {
        const inner = base.resource(resource, namespace);
        return new Proxy(inner, {
          get(target, property) {
            if (property === "create") return (_obj: unknown, options?: WriteOptions) => hang(options);
            if (property === "delete") return (_name: string, options?: DeleteOptions) => hang(options);
            if (property === "patch")
              return (_name: string, _patch: unknown, options?: PatchOptions) => hang(options);
            return Reflect.get(target, property);
          },
        });
      },
    };
    return { client, signals };
  }

  it("passes the signal to every API call; an aborted call rejects at once and records no Event", async () => {
    const { client, signals } = hangingClient();
    const recorder = new FakeEventRecorder();
    const control = new ClientPodControl({ client, recorder });
    const abort = new AbortController();
    const { signal } = abort;
    const calls = [
      control.createPods("prod", template, rs, controllerRef, { signal }),
      control.createPodsWithGenerateName("prod", template, rs, controllerRef, "web-x-", { signal }),
      control.deletePod("prod", "web-1", rs, { signal }),
      control.patchPod("prod", "web-1", { metadata: { labels: { a: "b" } } }, { signal }),
    ].map((call) => call.catch((error: unknown) => error));
    await Promise.resolve();
    expect(signals).toEqual([signal, signal, signal, signal]);
    abort.abort();
    const errors = await Promise.all(calls);
    expect(errors.every((error) => (error as Error).name === "AbortError")).toBe(true);
    expect(recorder.events).toEqual([]);
  });
});
