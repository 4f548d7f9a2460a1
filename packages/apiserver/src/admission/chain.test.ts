import { configMaps, newForbidden, type Pod, pods } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import type { AdmissionAttributes } from "../registry/admission.js";
import { MemoryStorage } from "../storage/memory-storage.js";
import { AdmissionChain, type AdmissionObserver } from "./chain.js";
import { type AdmissionPlugin, storageContext } from "./plugin.js";
import { builtinAdmissionPlugins, defaultAdmissionPlugins } from "./plugins/index.js";
import { WriteCountingStorage } from "./read-cache.js";
import { WebhookTransport } from "./webhook/transport.js";

const attributes = (name: string): AdmissionAttributes => ({
  operation: "CREATE",
  resource: configMaps,
  subresource: "",
  namespace: "default",
  name,
  object: { metadata: { name, labels: {} } },
  oldObject: undefined,
  dryRun: false,
  user: undefined,
  warn: () => {},
  annotate: () => {},
});

/** Records what the chain reports, without the durations (checked only to be numbers ≥ 0). */
function recorder(): { observer: AdmissionObserver; seen: string[] } {
  const seen: string[] = [];
  const seconds = (s: number) => {
    if (!(s >= 0)) throw new Error(`bad duration ${s}`);
  };
  return {
    seen,
    observer: {
      admissionController: (name, operation, rejected, type, s) => {
        seconds(s);
        seen.push(`${name} ${type} ${operation} rejected=${rejected}`);
      },
      admissionStep: (operation, rejected, type, s) => {
        seconds(s);
        seen.push(`step ${type} ${operation} rejected=${rejected}`);
      },
    },
  };
}

const labeler: AdmissionPlugin = {
  name: "Labeler",
  admit: (a) => {
    a.object!.metadata!.labels!.seen = "yes";
  },
};
const slowLabeler: AdmissionPlugin = {
  name: "SlowLabeler",
  admit: async (a) => {
    await Promise.resolve();
    a.object!.metadata!.labels!.slow = "yes";
    return true;
  },
};
const refuser: AdmissionPlugin = {
  name: "Refuser",
  validate: (a) => {
    if (a.name === "bad") throw newForbidden({ group: "", resource: "configmaps" }, a.name, "no");
  },
};
const podsOnly: AdmissionPlugin = { name: "PodsOnly", resources: ["/pods"], validate: () => {} };

describe("AdmissionChain", () => {
  it("runs within the call while no plugin waits, and from a plugin's promise on once one does", async () => {
    const chain = new AdmissionChain([labeler, refuser]);
    const a = attributes("good");
    expect(chain.mutate(a)).toBe(false);
    expect(a.object?.metadata?.labels).toEqual({ seen: "yes" });
    expect(chain.validate(a)).toBeUndefined();
    expect(() => chain.validate(attributes("bad"))).toThrow('configmaps "bad" is forbidden: no');

    const waiting = new AdmissionChain([slowLabeler, labeler]);
    const b = attributes("good");
    const pending = waiting.mutate(b);
    expect(pending).toBeInstanceOf(Promise);
    // The plugin after the waiting one has not run yet.
    expect(b.object?.metadata?.labels).toEqual({});
    expect(await pending).toBe(true);
    expect(b.object?.metadata?.labels).toEqual({ slow: "yes", seen: "yes" });
  });

  it("reports each plugin's phase and each whole phase to its observer, refusals as rejected", async () => {
    const chain = new AdmissionChain([slowLabeler, labeler, refuser, podsOnly]);
    const { observer, seen } = recorder();
    chain.observer = observer;
    await chain.mutate(attributes("good"));
    await chain.validate(attributes("good"));
    await expect(async () => chain.validate(attributes("bad"))).rejects.toThrow("no");
    expect(seen).toEqual([
      "SlowLabeler admit CREATE rejected=false",
      "Labeler admit CREATE rejected=false",
      "step admit CREATE rejected=false",
      "Refuser validate CREATE rejected=false",
      "step validate CREATE rejected=false",
      // PodsOnly looks at pods only: it is neither asked nor timed for a ConfigMap.
      "Refuser validate CREATE rejected=true",
      "step validate CREATE rejected=true",
    ]);
    seen.length = 0;
    chain.observer = undefined;
    await chain.mutate(attributes("good"));
    expect(seen).toEqual([]);
  });

  it("a server times its chain while someone observes it, and stops when the last one leaves", async () => {
    const server = new ApiServer({ admissionPlugins: ["NamespaceLifecycle"], garbageCollection: false });
    try {
      const { observer, seen } = recorder();
      const stop = server.observeAdmission(observer);
      const api = server.client().resource(configMaps, "default");
      await api.create({ metadata: { name: "one" } });
      // A phase with no plugin is timed too, as kube-apiserver times its whole validating step.
      expect(seen).toEqual([
        "NamespaceLifecycle admit CREATE rejected=false",
        "step admit CREATE rejected=false",
        "step validate CREATE rejected=false",
      ]);
      stop();
      await api.create({ metadata: { name: "two" } });
      expect(seen).toHaveLength(3);
    } finally {
      await server.close();
    }
  });

  it("admits a pod within the call once the lists the default plugins read are cached", async () => {
    const storage = new WriteCountingStorage(new MemoryStorage());
    await storage.create("/core/namespaces/default", { metadata: { name: "default" } });
    await storage.create("/core/serviceaccounts/default/default", {
      metadata: { name: "default", namespace: "default" },
    });
    const context = storageContext(storage, new FakeClock(0));
    const chain = new AdmissionChain(
      builtinAdmissionPlugins(defaultAdmissionPlugins, { context, transport: new WebhookTransport() }),
    );
    const pod = (name: string): AdmissionAttributes => ({
      ...attributes(name),
      resource: pods,
      object: { metadata: { name }, spec: { containers: [{ name: "c", image: "nginx" }] } } as Pod,
    });
    // The first write reads the lists (namespaces, ServiceAccounts, LimitRanges, quotas, webhooks, policies).
    const first = pod("one");
    await chain.mutate(first);
    await chain.validate(first);
    // The next finds them cached: no webhook, policy or quota is configured, so nothing waits.
    const second = pod("two");
    expect(chain.mutate(second)).toBe(false);
    expect(chain.validate(second)).toBeUndefined();
    expect((second.object as Pod).spec).toMatchObject({ serviceAccountName: "default", priority: 0 });
    // A write to a collection a plugin lists makes the next write read it again.
    await storage.create("/core/resourcequotas/default/q", { metadata: { name: "q", namespace: "default" } });
    expect(chain.validate(pod("three"))).toBeInstanceOf(Promise);
  });
});
