import type { PodSpec } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../../testing/kubectl.js";
import { podSecurityViolations } from "./pod-security.js";

// pod-security-admission's checks (staging/src/k8s.io/pod-security-admission/policy), their texts.

const nginx: PodSpec = { containers: [{ name: "nginx", image: "nginx" }] };
const hardened: PodSpec = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  containers: [
    {
      name: "nginx",
      image: "nginx",
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
    },
  ],
};

describe("PodSecurity levels", () => {
  it("a plain pod passes baseline and fails restricted four ways, in upstream's order and words", () => {
    expect(podSecurityViolations("baseline", nginx)).toEqual([]);
    expect(podSecurityViolations("restricted", nginx)).toEqual([
      'allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false)',
      'unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"])',
      'runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true)',
      'seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ]);
    expect(podSecurityViolations("restricted", hardened)).toEqual([]);
    expect(podSecurityViolations("privileged", { ...nginx, hostNetwork: true })).toEqual([]);
  });

  it("baseline refuses host namespaces, privileged containers, hostPath, host ports, added capabilities and unsafe sysctls", () => {
    const spec: PodSpec = {
      hostNetwork: true,
      hostPID: true,
      securityContext: { sysctls: [{ name: "kernel.msgmax", value: "1" }] },
      volumes: [{ name: "root", hostPath: { path: "/" } }],
      containers: [
        {
          name: "a",
          image: "x",
          securityContext: { privileged: true, capabilities: { add: ["NET_ADMIN", "CHOWN"] } },
        },
        { name: "b", image: "x", ports: [{ containerPort: 80, hostPort: 8080 }] },
      ],
    };
    expect(podSecurityViolations("baseline", spec)).toEqual([
      'non-default capabilities (container "a" must not include "NET_ADMIN" in securityContext.capabilities.add)',
      "host namespaces (hostNetwork=true, hostPID=true)",
      'hostPath volumes (volume "root")',
      'hostPort (container "b" uses hostPort 8080)',
      'privileged (container "a" must not set securityContext.privileged=true)',
      "forbidden sysctls (kernel.msgmax)",
    ]);
  });

  it("restricted refuses volume types outside its list, and root", () => {
    const spec: PodSpec = {
      ...hardened,
      securityContext: { ...hardened.securityContext, runAsUser: 0 },
      volumes: [
        { name: "data", nfs: { server: "s", path: "/" } },
        { name: "tmp", emptyDir: {} },
      ],
    };
    expect(podSecurityViolations("restricted", spec)).toEqual([
      'restricted volume types (volume "data" uses restricted volume type "nfs")',
      "runAsUser=0 (pod must not set runAsUser=0)",
    ]);
  });
});

afterEach(closeKubectlClusters);

describe("kubectl and PodSecurity namespace labels", () => {
  it("enforce refuses a pod as a cluster does; warn warns about a Deployment's template", async () => {
    const { kubectl } = await kubectlCluster({ kubernetesService: false });
    expect(
      (await kubectl(["label", "namespace", "default", "pod-security.kubernetes.io/enforce=restricted"]))
        .code,
    ).toBe(0);
    const refused = await kubectl(["run", "nginx", "--image=nginx", "--restart=Never"]);
    expect(refused.stderr).toBe(
      'Error from server (Forbidden): pods "nginx" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")\n',
    );
    expect((await kubectl(["create", "namespace", "team"])).code).toBe(0);
    expect(
      (await kubectl(["label", "namespace", "team", "pod-security.kubernetes.io/warn=baseline"])).code,
    ).toBe(0);
    const warned = await kubectl([
      "-n",
      "team",
      "create",
      "deployment",
      "web",
      "--image=nginx",
      "--port=80",
      "--dry-run=server",
    ]);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe("");
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "host", namespace: "team" },
      spec: {
        selector: { matchLabels: { app: "host" } },
        template: {
          metadata: { labels: { app: "host" } },
          spec: { hostNetwork: true, containers: [{ name: "c", image: "nginx" }] },
        },
      },
    };
    const hostNet = await kubectl(["apply", "-f", "-"], JSON.stringify(deployment));
    expect(hostNet.code).toBe(0);
    expect(hostNet.stderr).toBe(
      'Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)\n',
    );
  });
});
