import { afterEach, describe, expect, it } from "vitest";
import { customResourceDefinitions } from "./controller.js";
import { call, closeCrdServers, crdCondition, startCrdServer } from "./crd.test-util.js";

// Hostile CustomResourceDefinitions: each is answered as upstream answers it, and objects of its kind
// are judged exactly. How long each blocks the server is measured by `pnpm bench hostile-crd`.

afterEach(closeCrdServers);

const spec = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties: { spec: { type: "object", properties, ...extra } },
});

async function serveKind(openAPIV3Schema: Record<string, unknown>) {
  const { api, http } = await startCrdServer();
  const created = await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    metadata: { name: "things.hostile.example.com" },
    spec: {
      group: "hostile.example.com",
      scope: "Namespaced",
      names: { plural: "things", kind: "Thing" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema } }],
    },
  });
  expect(created.code).toBe(201);
  await crdCondition(api, "things.hostile.example.com", "Established");
  let n = 0;
  return (thingSpec: unknown) =>
    call(http, "POST", "/apis/hostile.example.com/v1/namespaces/default/things", {
      metadata: { name: `t${n++}` },
      spec: thingSpec,
    });
}

describe("hostile CustomResourceDefinitions", () => {
  it("a 100,000-value enum: members accepted, others refused with upstream's message", async () => {
    const create = await serveKind(
      spec({ mode: { type: "string", enum: Array.from({ length: 100_000 }, (_, i) => `mode-${i}`) } }),
    );
    expect((await create({ mode: "mode-99999" })).code).toBe(201);
    const refused = await create({ mode: "none" });
    expect(refused.code).toBe(422);
    expect(refused.body.message).toMatch(
      /^Thing\.hostile\.example\.com "t1" is invalid: spec\.mode: Unsupported value: "none": supported values: "mode-0", "mode-1", /,
    );
  });

  it("a 250-deep schema: an object as deep is accepted, a wrong leaf named by its whole path", async () => {
    const schemaAt = (depth: number): Record<string, unknown> =>
      depth === 0 ? { type: "string" } : { type: "object", properties: { n: schemaAt(depth - 1) } };
    const valueAt = (depth: number, leaf: unknown): unknown =>
      depth === 0 ? leaf : { n: valueAt(depth - 1, leaf) };
    const create = await serveKind(spec({ n: schemaAt(250) }));
    expect((await create({ n: valueAt(250, "leaf") })).code).toBe(201);
    const wrong = await create({ n: valueAt(250, 7) });
    expect(wrong.code).toBe(422);
    expect(wrong.body.message).toBe(
      `Thing.hostile.example.com "t1" is invalid: spec${".n".repeat(251)}: Invalid value: "integer": spec${".n".repeat(251)} in body must be of type string: "integer"`,
    );
  });

  it("10,000 properties with patterns: a whole object accepted, one wrong field named", async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 10_000 }, (_, i) => [`f${i}`, { type: "string", pattern: "^[a-z0-9-]+$" }]),
    );
    const create = await serveKind(spec(properties));
    expect(
      (await create(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, `v-${i}`])))).code,
    ).toBe(201);
    const wrong = await create({ f9999: "NO" });
    expect([wrong.code, wrong.body.message]).toEqual([
      422,
      'Thing.hostile.example.com "t1" is invalid: spec.f9999: Invalid value: "NO": spec.f9999 in body should match \'^[a-z0-9-]+$\'',
    ]);
  });
});

describe("large writes", () => {
  const wideCrd = (name: string) => ({
    metadata: { name: `${name}.hostile.example.com` },
    spec: {
      group: "hostile.example.com",
      scope: "Namespaced",
      names: { plural: name, kind: `${name[0]!.toUpperCase()}${name.slice(1, -1)}` },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: spec(
              Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`f${i}`, { type: "string" }])),
            ),
          },
        },
      ],
    },
  });

  it("a large write lets other work in between its phases", async () => {
    const { api } = await startCrdServer();
    const crds = api.client().resource(customResourceDefinitions);
    const order: string[] = [];
    const creating = crds.create(wideCrd("widgets") as never).then(() => order.push("created"));
    setImmediate(() => order.push("other work"));
    await creating;
    expect(order).toEqual(["other work", "created"]);
    // A small write runs through without yielding.
    const small = crds.create({
      ...wideCrd("gadgets"),
      spec: { ...wideCrd("gadgets").spec, versions: [] },
    } as never);
    setImmediate(() => order.push("after the small write"));
    await small.catch(() => undefined);
    order.push("small written");
    expect(order.slice(2)).toEqual(["small written"]);
  });

  it("a /status write of a CRD checks its accepted names, not its whole spec again", async () => {
    const { api, http } = await startCrdServer();
    await api
      .client()
      .resource(customResourceDefinitions)
      .create(wideCrd("widgets") as never);
    const stored = await crdCondition(api, "widgets.hostile.example.com", "Established");
    const answer = await call(
      http,
      "PUT",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.hostile.example.com/status",
      {
        ...stored,
        status: { ...stored.status, acceptedNames: { ...stored.status?.acceptedNames, kind: "Not A Kind" } },
      },
    );
    expect([answer.code, answer.body.message]).toEqual([
      422,
      "CustomResourceDefinition.apiextensions.k8s.io \"widgets.hostile.example.com\" is invalid: status.acceptedNames.kind: Invalid value: \"Not A Kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });
});
