import { configMaps } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import type { AdmissionPlugin } from "../../admission/plugin.js";
import { ApiServer } from "../../api-server.js";

describe("a write's admission attributes", () => {
  it("carry warnings and audit annotations from the validating phase of every verb, with the objects it sees", async () => {
    const seen: string[] = [];
    const noting: AdmissionPlugin = {
      name: "Noting",
      validate(a) {
        const data = (a.object as { data?: Record<string, string> } | undefined)?.data;
        const old = (a.oldObject as { data?: Record<string, string> } | undefined)?.data;
        seen.push(`${a.operation} ${a.namespace}/${a.name} ${JSON.stringify(data)} ${JSON.stringify(old)}`);
        a.warn(`${a.operation.toLowerCase()} seen`);
        a.annotate("noting.example.com/operation", a.operation);
      },
    };
    const server = new ApiServer({
      admissionPlugins: ["NamespaceLifecycle", noting],
      garbageCollection: false,
    });
    try {
      const registry = server.registry;
      const options = () => {
        const annotations: string[] = [];
        return {
          warnings: [] as string[],
          annotations,
          annotate: (key: string, value: string) => {
            annotations.push(`${key}=${value}`);
          },
        };
      };
      const created = options();
      await registry.create(configMaps, "default", { metadata: { name: "a" }, data: { v: "1" } }, created);
      const updated = options();
      await registry.update(
        configMaps,
        "default",
        "a",
        { metadata: { name: "a" }, data: { v: "2" } },
        updated,
      );
      const deleted = options();
      await registry.delete(configMaps, "default", "a", deleted);
      expect([created, updated, deleted].map(({ warnings, annotations }) => [warnings, annotations])).toEqual(
        [
          [["create seen"], ["noting.example.com/operation=CREATE"]],
          [["update seen"], ["noting.example.com/operation=UPDATE"]],
          [["delete seen"], ["noting.example.com/operation=DELETE"]],
        ],
      );
      expect(seen).toEqual([
        'CREATE default/a {"v":"1"} undefined',
        'UPDATE default/a {"v":"2"} {"v":"1"}',
        'DELETE default/a undefined {"v":"2"}',
      ]);
    } finally {
      await server.close();
    }
  });
});
