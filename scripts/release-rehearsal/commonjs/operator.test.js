// A CommonJS test as Jest runs it (Jest's own module loader, no ESM).
const { configMaps, isNotFound } = require("@reconcile/api");
const { startTestEnvironment } = require("@reconcile/runtime/envtest");

test("envtest serves a ConfigMap to a test under Jest", async () => {
  const env = await startTestEnvironment({ http: false });
  try {
    const client = env.client.resource(configMaps, "default");
    await client.create({ metadata: { name: "a", namespace: "default" }, data: { key: "value" } });
    expect((await client.get("a")).data).toEqual({ key: "value" });
    const missing = await client.get("b").catch((error) => error);
    expect(isNotFound(missing)).toBe(true);
  } finally {
    await env.stop();
  }
});
