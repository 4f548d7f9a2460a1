// The ConfigMap mirror, composed with the builder: every ConfigMap labelled
// mirror=true gets a copy `<name>-mirror` in its namespace, controlled by it;
// a changed source is copied again, an edited or deleted copy is repaired,
// and the copy goes with the source (the garbage collector follows the
// controllerRef).
import { type ConfigMap, configMaps, parseSelector } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventually, startTestEnvironment, type TestEnvironment } from "./envtest/index.js";
import {
  createOrUpdate,
  labelSelector,
  Manager,
  newControllerManagedBy,
  setControllerReference,
} from "./index.js";

// --- the whole controller (with `new Manager({ client })` and `manager.run({ signal })`, 23 lines) ---
function mirrorController(manager: Manager): void {
  newControllerManagedBy(manager)
    .for(configMaps, { predicates: [labelSelector(parseSelector("mirror=true"))] })
    .owns(configMaps)
    .complete(async (request, { client, signal, get }) => {
      const { namespace, name } = request;
      const source = get(configMaps, request);
      if (source === undefined || source.metadata?.deletionTimestamp) return;
      const copies = client.resource(configMaps, namespace);
      const mirror: ConfigMap = { metadata: { name: `${name}-mirror`, namespace } };
      await createOrUpdate(
        copies,
        mirror,
        (cm) => {
          cm.data = { ...source.data };
          setControllerReference(source, configMaps, cm);
        },
        { signal },
      );
    });
}
// -------------------------------------------------------------------------------

describe("the ConfigMap mirror on the builder", () => {
  let env: TestEnvironment;
  let clock: FakeClock;
  let stop: AbortController;
  let running: Promise<void>;

  beforeEach(async () => {
    clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    env = await startTestEnvironment({ clock, http: false });
    const manager = new Manager({ client: env.client, clock });
    mirrorController(manager);
    stop = new AbortController();
    running = manager.run({ signal: stop.signal });
  });

  afterEach(async () => {
    stop.abort();
    await running;
    await env.stop();
  });

  const cms = () => env.client.resource(configMaps, "default");
  const mirrorData = async () => {
    try {
      return (await cms().get("app-mirror")).data;
    } catch {
      return undefined;
    }
  };

  it("copies a labelled ConfigMap, controlled by it, and follows its changes", async () => {
    const source = await cms().create({
      metadata: { name: "app", namespace: "default", labels: { mirror: "true" } },
      data: { greeting: "hello" },
    });
    await eventually(async () => (await mirrorData())?.greeting === "hello", { clock });
    const mirror = await cms().get("app-mirror");
    expect(mirror.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "app",
        uid: source.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    await cms().update({ ...source, data: { greeting: "bonjour" } });
    await eventually(async () => (await mirrorData())?.greeting === "bonjour", { clock });
  });

  it("repairs an edited copy and recreates a deleted one (owns: child events request the owner)", async () => {
    await cms().create({
      metadata: { name: "app", namespace: "default", labels: { mirror: "true" } },
      data: { a: "1" },
    });
    await eventually(async () => (await mirrorData())?.a === "1", { clock });
    const copy = await cms().get("app-mirror");
    await cms().update({ ...copy, data: { a: "tampered" } });
    await eventually(async () => (await mirrorData())?.a === "1", { clock });
    await cms().delete("app-mirror");
    await eventually(async () => (await mirrorData())?.a === "1", { clock });
  });

  it("ignores ConfigMaps without the label", async () => {
    await cms().create({ metadata: { name: "app", namespace: "default" }, data: { a: "1" } });
    // A labelled one created afterwards is mirrored; by then the first one's events have been handled.
    await cms().create({ metadata: { name: "other", namespace: "default", labels: { mirror: "true" } } });
    await eventually(
      async () => (await cms().list()).items.some((c) => c.metadata?.name === "other-mirror"),
      {
        clock,
      },
    );
    expect(await mirrorData()).toBeUndefined();
  });

  it("the copy is garbage-collected with its source", async () => {
    await cms().create({ metadata: { name: "app", namespace: "default", labels: { mirror: "true" } } });
    await eventually(async () => (await cms().list()).items.length === 2, { clock });
    await cms().delete("app");
    await eventually(
      async () => (await mirrorData()) === undefined && (await cms().list()).items.length === 0,
      {
        clock,
      },
    );
  });
});
