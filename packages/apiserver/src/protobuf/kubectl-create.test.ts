import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";

// kubectl's generators send these kinds as protobuf: each body is decoded by
// its message table and stored as the JSON kubectl would have sent.

afterEach(closeKubectlClusters);

// biome-ignore lint/suspicious/noExplicitAny: JSON answers read loosely, asserted exactly
type Json = any;

describe("kubectl create of the kinds served as storage only", () => {
  it("creates each from kubectl's protobuf body with the fields kubectl set", async () => {
    const { kubectl } = await kubectlCluster();
    const create = async (args: string[], expected: string) => {
      const result = await kubectl(["create", ...args]);
      expect(result).toMatchObject({ code: 0, stdout: `${expected}\n` });
    };
    const get = async (kind: string, name: string): Promise<Json> =>
      JSON.parse((await kubectl(["get", kind, name, "-o", "json"])).stdout);

    await create(["serviceaccount", "robot"], "serviceaccount/robot created");
    expect((await get("serviceaccount", "robot")).metadata.name).toBe("robot");

    await create(["quota", "q", "--hard=cpu=1,pods=2", "--scopes=BestEffort"], "resourcequota/q created");
    expect((await get("resourcequota", "q")).spec).toEqual({
      hard: { cpu: "1", pods: "2" },
      scopes: ["BestEffort"],
    });

    await create(
      ["role", "reader", "--verb=get,list", "--resource=pods"],
      "role.rbac.authorization.k8s.io/reader created",
    );
    expect((await get("role", "reader")).rules).toEqual([
      { verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] },
    ]);

    await create(
      ["clusterrole", "node-reader", "--verb=get", "--resource=nodes", "--non-resource-url=/healthz"],
      "clusterrole.rbac.authorization.k8s.io/node-reader created",
    );
    expect((await get("clusterrole", "node-reader")).rules).toEqual([
      { verbs: ["get"], apiGroups: [""], resources: ["nodes"] },
      { verbs: ["get"], nonResourceURLs: ["/healthz"] },
    ]);

    await create(
      ["rolebinding", "read-pods", "--role=reader", "--serviceaccount=default:robot", "--user=ann"],
      "rolebinding.rbac.authorization.k8s.io/read-pods created",
    );
    const binding = await get("rolebinding", "read-pods");
    expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" });
    expect(binding.subjects).toEqual([
      { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "ann" },
      { kind: "ServiceAccount", name: "robot", namespace: "default" },
    ]);

    await create(
      ["clusterrolebinding", "read-nodes", "--clusterrole=node-reader", "--group=ops"],
      "clusterrolebinding.rbac.authorization.k8s.io/read-nodes created",
    );
    expect((await get("clusterrolebinding", "read-nodes")).subjects).toEqual([
      { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "ops" },
    ]);

    await create(
      ["cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *"],
      "cronjob.batch/tick created",
    );
    const cronJob = await get("cronjob", "tick");
    expect(cronJob.spec.schedule).toBe("*/5 * * * *");
    expect(cronJob.spec.jobTemplate.metadata.name).toBe("tick");
    expect(cronJob.spec.jobTemplate.spec.template.spec.containers).toEqual([
      expect.objectContaining({ name: "tick", image: "busybox" }),
    ]);
    expect(cronJob.spec.jobTemplate.spec.template.spec.restartPolicy).toBe("OnFailure");

    await create(
      ["ingress", "web", "--class=nginx", "--rule=example.com/shop*=shop:8080,tls=web-tls"],
      "ingress.networking.k8s.io/web created",
    );
    expect((await get("ingress", "web")).spec).toEqual({
      ingressClassName: "nginx",
      rules: [
        {
          host: "example.com",
          http: {
            paths: [
              {
                path: "/shop",
                pathType: "Prefix",
                backend: { service: { name: "shop", port: { number: 8080 } } },
              },
            ],
          },
        },
      ],
      tls: [{ hosts: ["example.com"], secretName: "web-tls" }],
    });

    await create(
      ["poddisruptionbudget", "web", "--selector=app=web", "--min-available=50%"],
      "poddisruptionbudget.policy/web created",
    );
    expect((await get("pdb", "web")).spec).toEqual({
      minAvailable: "50%",
      selector: { matchLabels: { app: "web" } },
    });

    await create(
      ["priorityclass", "high", "--value=1000", "--description=important", "--preemption-policy=Never"],
      "priorityclass.scheduling.k8s.io/high created",
    );
    expect(await get("priorityclass", "high")).toMatchObject({
      value: 1000,
      description: "important",
      preemptionPolicy: "Never",
    });
  });
});
