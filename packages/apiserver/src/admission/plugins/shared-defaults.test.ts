import { type Pod, pods, serviceAccounts } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import type { AdmissionPlugin } from "../plugin.js";
import { defaultNotReady, defaultUnreachable } from "./default-toleration-seconds.js";
import { defaultAdmissionPlugins } from "./index.js";
import { tokenProjection } from "./service-account.js";

// The token volume's projection and the two default tolerations are one
// object each, held by every pod the chain admits. This holds only while no
// write changes a stored object in place: every kind of write that touches
// them is made here, and the shared objects must come out as they went in.
describe("what the default chain gives every pod, shared between them", () => {
  it("is held by every stored pod, copied for clients, and changed by no write", async () => {
    const server = new ApiServer({ admissionPlugins: defaultAdmissionPlugins, garbageCollection: false });
    const before = structuredClone({ tokenProjection, defaultNotReady, defaultUnreachable });
    try {
      const client = server.client();
      await client.resource(serviceAccounts, "default").create({ metadata: { name: "default" } });
      const podClient = client.resource(pods, "default");
      const container = { name: "c", image: "nginx:1.27" };
      for (const name of ["a", "b"])
        await podClient.create({ metadata: { name }, spec: { containers: [container] } });

      // Stored: both pods hold the same objects.
      const stored = async (name: string) => (await server.storage.get(`/core/pods/default/${name}`)) as Pod;
      const [a, b] = [await stored("a"), await stored("b")];
      expect(a.spec?.volumes?.[0]?.projected).toBe(tokenProjection);
      expect(b.spec?.volumes?.[0]?.projected).toBe(tokenProjection);
      expect(a.spec?.tolerations).toEqual([defaultNotReady, defaultUnreachable]);
      expect(b.spec?.tolerations?.[0]).toBe(defaultNotReady);
      expect(b.spec?.tolerations?.[1]).toBe(defaultUnreachable);

      // A client's copy is its own, and changeable.
      const copy = await podClient.get("b");
      expect(copy.spec?.volumes?.[0]?.projected).not.toBe(tokenProjection);
      copy.spec!.volumes![0]!.projected!.defaultMode = 0o600;
      copy.spec!.tolerations![0]!.tolerationSeconds = 5;

      // Every kind of write, on the parts the pods share. Some are refused (a pod's volumes cannot change).
      const outcomes: string[] = [];
      const attempt = async (what: string, write: () => Promise<unknown>) => {
        try {
          await write();
          outcomes.push(`${what}: ok`);
        } catch (error) {
          outcomes.push(`${what}: ${(error as { code?: number }).code}`);
        }
      };
      await attempt("update", () => podClient.update(copy));
      await attempt("json patch, volume", () =>
        podClient.patch("b", [{ op: "replace", path: "/spec/volumes/0/projected/defaultMode", value: 384 }], {
          type: "json",
        }),
      );
      await attempt("json patch, toleration", () =>
        podClient.patch("b", [{ op: "replace", path: "/spec/tolerations/0/tolerationSeconds", value: 7 }], {
          type: "json",
        }),
      );
      await attempt("json patch, added toleration", () =>
        podClient.patch(
          "b",
          [{ op: "add", path: "/spec/tolerations/-", value: { key: "x", operator: "Exists" } }],
          {
            type: "json",
          },
        ),
      );
      await attempt("strategic merge patch, volume", () =>
        podClient.patch(
          "b",
          { spec: { volumes: [{ name: a.spec!.volumes![0]!.name, projected: { defaultMode: 256 } }] } },
          { type: "strategic-merge" },
        ),
      );
      await attempt("merge patch, tolerations", () =>
        podClient.patch(
          "b",
          { spec: { tolerations: [{ ...defaultNotReady, tolerationSeconds: 9 }, defaultUnreachable] } },
          { type: "merge" },
        ),
      );
      await attempt("apply, tolerations", () =>
        podClient.patch(
          "b",
          {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "b" },
            spec: { containers: [container], tolerations: [{ key: "y", operator: "Exists" }] },
          },
          { type: "apply", fieldManager: "tester", force: true },
        ),
      );
      await attempt("status", async () => {
        const current = await podClient.get("b");
        await podClient.updateStatus({ ...current, status: { phase: "Running" } });
      });
      expect(outcomes).toEqual([
        "update: 422",
        "json patch, volume: 422",
        // An existing toleration's seconds may change (upstream's validateOnlyAddedTolerations).
        "json patch, toleration: ok",
        "json patch, added toleration: ok",
        "strategic merge patch, volume: 422",
        "merge patch, tolerations: ok",
        "apply, tolerations: ok",
        "status: ok",
      ]);

      // The shared objects are as they were, and so is the pod nobody wrote to.
      expect({ tokenProjection, defaultNotReady, defaultUnreachable }).toEqual(before);
      expect((await podClient.get("a")).spec?.volumes?.[0]?.projected).toEqual(before.tokenProjection);
      expect((await podClient.get("a")).spec?.tolerations).toEqual([
        before.defaultNotReady,
        before.defaultUnreachable,
      ]);
    } finally {
      await server.close();
    }
  });

  it("is not shared where a plugin of the server's user could change it in place", async () => {
    const before = structuredClone({ tokenProjection, defaultNotReady, defaultUnreachable });
    // A plugin of one's own that shortens a pod's default toleration and changes its token file mode.
    const shorten: AdmissionPlugin = {
      name: "Shorten",
      admit(a) {
        const pod = a.object as Pod | undefined;
        if (a.operation !== "CREATE" || pod?.metadata?.name !== "changed") return;
        pod.spec!.tolerations![0]!.tolerationSeconds = 60;
        pod.spec!.volumes![0]!.projected!.defaultMode = 0o600;
      },
    };
    const server = new ApiServer({
      admissionPlugins: [...defaultAdmissionPlugins, shorten],
      garbageCollection: false,
    });
    try {
      const client = server.client();
      await client.resource(serviceAccounts, "default").create({ metadata: { name: "default" } });
      const podClient = client.resource(pods, "default");
      const container = { name: "c", image: "nginx:1.27" };
      const changed = await podClient.create({
        metadata: { name: "changed" },
        spec: { containers: [container] },
      });
      const plain = await podClient.create({
        metadata: { name: "plain" },
        spec: { containers: [container] },
      });
      expect(changed.spec?.tolerations?.[0]?.tolerationSeconds).toBe(60);
      expect(changed.spec?.volumes?.[0]?.projected?.defaultMode).toBe(0o600);
      expect(plain.spec?.tolerations).toEqual([before.defaultNotReady, before.defaultUnreachable]);
      expect(plain.spec?.volumes?.[0]?.projected).toEqual(before.tokenProjection);
      const stored = (await server.storage.get("/core/pods/default/plain")) as Pod;
      expect(stored.spec?.volumes?.[0]?.projected).not.toBe(tokenProjection);
      expect(stored.spec?.tolerations?.[0]).not.toBe(defaultNotReady);
      expect({ tokenProjection, defaultNotReady, defaultUnreachable }).toEqual(before);
    } finally {
      await server.close();
    }
  });
});
