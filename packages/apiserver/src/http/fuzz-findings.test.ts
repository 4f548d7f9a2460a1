import { configMaps, horizontalPodAutoscalers, serviceAccounts } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { horizontalPodAutoscalersV1 } from "../kinds/autoscaling.js";

// What the mutation fuzzer (mutation-fuzz.test.ts) found answered with a 500, each answered now as upstream does.

const servers: ApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serve() {
  const api = new ApiServer();
  servers.push(api);
  const listening = await api.listen({ token: "t0ken" });
  const call = async (method: string, path: string, body?: unknown, contentType = "application/json") => {
    const answer = await fetch(`${listening.url}${path}`, {
      method,
      headers: { authorization: "Bearer t0ken", "content-type": contentType },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { code: answer.status, body: (await answer.json()) as Record<string, unknown> };
  };
  return { api, call };
}

/** A server holding ConfigMap `c`, and a function that sends it a JSON patch. */
async function patchedConfigMap() {
  const { api, call } = await serve();
  await api
    .client()
    .resource(configMaps, "default")
    .create({ metadata: { name: "c" }, data: { a: "1" } });
  return (operations: unknown[]) =>
    call("PATCH", "/api/v1/namespaces/default/configmaps/c", operations, "application/json-patch+json");
}

describe("requests the mutation fuzzer answered with a 500", () => {
  it("a JSON patch into managedFields' FieldsV1 works on a copy of the stored trees", async () => {
    const patch = await patchedConfigMap();
    const answer = await patch([
      { op: "add", path: "/metadata/managedFields/0/fieldsV1/f:data/f:b", value: {} },
    ]);
    expect(answer.code).toBe(200);
    // The stored object's own trees are as they were: a second patch sees the first's result only.
    const again = await patch([{ op: "remove", path: "/metadata/managedFields/0/fieldsV1/f:data" }]);
    expect(again.code).toBe(200);
  });

  it("a JSON patch that copies what holds managedFields works on a copy of the shared trees too", async () => {
    const patch = await patchedConfigMap();
    const answer = await patch([
      { op: "copy", from: "/metadata", path: "/data/copied" },
      { op: "add", path: "/data/copied/managedFields/0/fieldsV1/f:data/f:b", value: {} },
      { op: "remove", path: "/data/copied" },
    ]);
    expect(answer.code).toBe(200);
  });

  it("a TokenRequest longer than 2^32 seconds is a 422, a non-integer one a 400", async () => {
    const { api, call } = await serve();
    await api
      .client()
      .resource(serviceAccounts, "default")
      .create({ metadata: { name: "sa" } });
    const path = "/api/v1/namespaces/default/serviceaccounts/sa/token";
    const long = await call("POST", path, { spec: { expirationSeconds: 2 ** 33 } });
    expect([long.code, long.body.message]).toEqual([
      422,
      'TokenRequest.authentication.k8s.io "sa" is invalid: spec.expirationSeconds: Invalid value: 8589934592: may not specify a duration larger than 2^32 seconds',
    ]);
    const huge = await call("POST", path, { spec: { expirationSeconds: 1e308 } });
    expect([huge.code, huge.body.message]).toEqual([
      400,
      'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal number 1e+308 into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64',
    ]);
  });

  it("a review reads null as absent and a wrongly typed field as a 400, as its Go type", async () => {
    const { call } = await serve();
    const path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
    const absent = await call("POST", path, { spec: { user: "jane", resourceAttributes: null } });
    expect([absent.code, absent.body.message]).toEqual([
      422,
      'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    ]);
    const wrong = await call("POST", path, { spec: { user: "jane", groups: "dev" } });
    expect([wrong.code, wrong.body.message]).toEqual([
      400,
      'SubjectAccessReview in version "v1" cannot be handled as a SubjectAccessReview: json: cannot unmarshal string into Go struct field SubjectAccessReviewSpec.spec.groups of type []string',
    ]);
  });

  it("an autoscaler metric without its source is a 422, so no stored autoscaler can fail the v1 view", async () => {
    const { api, call } = await serve();
    const hpa = (metric: Record<string, unknown>) => ({
      metadata: { name: "web" },
      spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 3, metrics: [metric] },
    });
    const path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
    const noSource = await call("POST", path, hpa({ type: "Resource" }));
    expect([noSource.code, noSource.body.message]).toEqual([
      422,
      'HorizontalPodAutoscaler.autoscaling "web" is invalid: spec.metrics[0].resource: Required value: must populate information for the given metric source',
    ]);
    const noTarget = await call("POST", path, hpa({ type: "Resource", resource: { name: "cpu" } }));
    expect(noTarget.code).toBe(422);
    expect(noTarget.body.message).toContain(
      "spec.metrics[0].resource.target.type: Required value: must specify a metric target type",
    );
    const twoSources = await call(
      "POST",
      path,
      hpa({
        type: "Pods",
        pods: { metric: { name: "m" }, target: { type: "AverageValue", averageValue: "1" } },
        resource: { name: "cpu" },
      }),
    );
    expect(twoSources.body.message).toContain(
      "spec.metrics[0].resource: Forbidden: must populate the given metric source only",
    );
    await api
      .client()
      .resource(horizontalPodAutoscalers, "default")
      .create(
        hpa({
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } },
        }) as never,
      );
    const v1 = await api.client().resource(horizontalPodAutoscalersV1, "default").list();
    expect(
      v1.items.map(
        (item) =>
          (item as { spec?: { targetCPUUtilizationPercentage?: number } }).spec
            ?.targetCPUUtilizationPercentage,
      ),
    ).toEqual([50]);
  });
});
