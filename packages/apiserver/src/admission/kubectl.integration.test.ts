import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/kubectl.js";
import { defaultAdmissionPlugins } from "./plugins/index.js";

// What kubectl shows of admission on the embedded server with kube-apiserver's default plugins.

afterEach(closeKubectlClusters);

const limitRange = `apiVersion: v1
kind: LimitRange
metadata:
  name: limits
spec:
  limits:
  - type: Container
    default:
      cpu: 500m
      memory: 128Mi
    defaultRequest:
      cpu: 250m
    max:
      cpu: "1"
`;

describe("kubectl and the admission chain", () => {
  it("a LimitRange's defaults show in the pod, describe limitrange shows its defaulted values, and its max refuses", async () => {
    const { kubectl, file } = await kubectlCluster({
      kubernetesService: false,
      admissionPlugins: defaultAdmissionPlugins.filter((name) => name !== "ServiceAccount"),
    });
    expect((await kubectl(["apply", "-f", await file("limits.yaml", limitRange)])).code).toBe(0);
    const described = await kubectl(["describe", "limitrange", "limits"]);
    // kubectl prints the rows in the order of a Go map: any order.
    const lines = described.stdout.split("\n");
    expect(lines.slice(0, 4)).toEqual([
      "Name:       limits",
      "Namespace:  default",
      "Type        Resource  Min  Max  Default Request  Default Limit  Max Limit/Request Ratio",
      "----        --------  ---  ---  ---------------  -------------  -----------------------",
    ]);
    expect(lines.slice(4).sort()).toEqual([
      "",
      "Container   cpu       -    1    250m             500m           -",
      "Container   memory    -    -    128Mi            128Mi          -",
    ]);
    expect((await kubectl(["run", "web", "--image=nginx", "--restart=Never"])).code).toBe(0);
    const resources = await kubectl(["get", "pod", "web", "-o", "jsonpath={.spec.containers[0].resources}"]);
    expect(JSON.parse(resources.stdout)).toEqual({
      limits: { cpu: "500m", memory: "128Mi" },
      requests: { cpu: "250m", memory: "128Mi" },
    });
    const annotation = await kubectl([
      "get",
      "pod",
      "web",
      "-o",
      "jsonpath={.metadata.annotations.kubernetes\\.io/limit-ranger}",
    ]);
    expect(annotation.stdout).toBe(
      "LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web",
    );
    const spec = await kubectl([
      "get",
      "pod",
      "web",
      "-o",
      "jsonpath={.spec.priority} {.spec.preemptionPolicy} {.spec.tolerations[*].key}",
    ]);
    expect(spec.stdout).toBe(
      "0 PreemptLowerPriority node.kubernetes.io/not-ready node.kubernetes.io/unreachable",
    );
    const refused = await kubectl([
      "run",
      "big",
      "--image=nginx",
      "--restart=Never",
      "--overrides",
      '{"spec":{"containers":[{"name":"big","image":"nginx","resources":{"limits":{"cpu":"2"}}}]}}',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'Error from server (Forbidden): pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2\n',
    );
  });

  it("a pod in a namespace without its ServiceAccount is refused, as on a cluster whose controller has not made it yet", async () => {
    const { kubectl } = await kubectlCluster({
      kubernetesService: false,
      admissionPlugins: defaultAdmissionPlugins,
    });
    const refused = await kubectl(["run", "web", "--image=nginx", "--restart=Never"]);
    expect(refused.stderr).toBe(
      'Error from server (Forbidden): pods "web" is forbidden: error looking up service account default/default: serviceaccount "default" not found\n',
    );
    expect((await kubectl(["create", "serviceaccount", "default"])).code).toBe(0);
    expect((await kubectl(["run", "web", "--image=nginx", "--restart=Never"])).code).toBe(0);
    const mounts = await kubectl([
      "get",
      "pod",
      "web",
      "-o",
      "jsonpath={.spec.serviceAccountName} {.spec.containers[0].volumeMounts[0].mountPath}",
    ]);
    expect(mounts.stdout).toBe("default /var/run/secrets/kubernetes.io/serviceaccount");
  });
});
