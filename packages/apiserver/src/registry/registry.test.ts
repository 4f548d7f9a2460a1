import { deployments, namespaces, nodes, pods } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeServers, newServer, rejection } from "./registry.test-util.js";

afterEach(closeServers);

describe("resources", () => {
  it("stores nodes cluster-scoped and names namespaces with DNS labels", async () => {
    const client = newServer().client();
    const node = await client.resource(nodes).create({ metadata: { name: "node-1.example" } });
    expect(node.metadata?.namespace).toBeUndefined();
    const error = await rejection(client.resource(namespaces).create({ metadata: { name: "a.b" } }));
    expect(error.status.details?.causes?.map((c) => c.field)).toEqual(["metadata.name"]);
  });

  it("answers 404 for a resource the server does not serve", async () => {
    const client = newServer({ resources: [pods] }).client();
    const error = await rejection(client.resource(deployments, "default").list());
    expect(error.status.code).toBe(404);
  });
});
