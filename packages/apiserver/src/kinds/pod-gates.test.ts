// Scheduling gates on update, after upstream's TestValidatePodUpdate cases for schedulingGates
// (validateOnlyDeletedSchedulingGates): removing is allowed, adding is not.
import { pods, StatusError } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

async function gatedPod(gates: string[]) {
  const server = new ApiServer({ kubernetesService: false });
  const client = server.client().resource(pods, "default");
  const created = await client.create({
    metadata: { name: "p", namespace: "default" },
    spec: { containers: [{ name: "c", image: "nginx" }], schedulingGates: gates.map((name) => ({ name })) },
  });
  return { server, client, created };
}

describe("Pod update: scheduling gates", () => {
  it("removing gates is allowed, one at a time or all at once", async () => {
    const { server, client, created } = await gatedPod(["a", "b", "c"]);
    try {
      const fewer = await client.update({
        ...created,
        spec: { ...created.spec!, schedulingGates: [{ name: "b" }] },
      });
      expect(fewer.spec?.schedulingGates).toEqual([{ name: "b" }]);
      const none = await client.update({ ...fewer, spec: { ...fewer.spec!, schedulingGates: [] } });
      expect(none.spec?.schedulingGates ?? []).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("adding a gate is a 422 naming it; so is replacing one", async () => {
    const { server, client, created } = await gatedPod(["a"]);
    try {
      const error = await client
        .update({ ...created, spec: { ...created.spec!, schedulingGates: [{ name: "a" }, { name: "x" }] } })
        .then(
          () => undefined,
          (e: unknown) => e as StatusError,
        );
      expect(error).toBeInstanceOf(StatusError);
      expect(error?.status.code).toBe(422);
      expect(error?.status.message).toBe(
        `Pod "p" is invalid: spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'x'`,
      );
      const replaced = await client
        .update({ ...created, spec: { ...created.spec!, schedulingGates: [{ name: "y" }] } })
        .then(
          () => undefined,
          (e: unknown) => e as StatusError,
        );
      expect(replaced?.status.message).toBe(
        `Pod "p" is invalid: spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'y'`,
      );
    } finally {
      await server.close();
    }
  });

  it("a pod without gates cannot gain one", async () => {
    const { server, client, created } = await gatedPod([]);
    try {
      const error = await client
        .update({ ...created, spec: { ...created.spec!, schedulingGates: [{ name: "late" }] } })
        .then(
          () => undefined,
          (e: unknown) => e as StatusError,
        );
      expect(error?.status.message).toBe(
        `Pod "p" is invalid: spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'late'`,
      );
    } finally {
      await server.close();
    }
  });
});
