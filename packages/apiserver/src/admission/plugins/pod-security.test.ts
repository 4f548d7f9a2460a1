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

// Upstream's check tests (policy/check_*_test.go), their pods and texts.
describe("PodSecurity baseline: AppArmor, SELinux and Windows host processes", () => {
  const only = (id: string, spec: PodSpec, annotations: Record<string, string> = {}) =>
    podSecurityViolations("baseline", spec, annotations).filter((v) => v.startsWith(id));
  const aa = "container.apparmor.security.beta.kubernetes.io/";

  it.each([
    [{}, { [`${aa}test`]: "runtime/default", env: "prod" }],
    [{}, { [`${aa}test`]: "localhost/sec-profile01", env: "dev" }],
    [{}, { env: "dev" }],
    [{ securityContext: { appArmorProfile: { type: "RuntimeDefault" } } }, {}],
    [
      {
        containers: [
          { name: "foo", securityContext: { appArmorProfile: { type: "Localhost", localhostProfile: "p" } } },
        ],
      },
      {},
    ],
  ])("allows the runtime's default and local AppArmor profiles (%j, %j)", (spec, annotations) => {
    expect(podSecurityViolations("baseline", spec as PodSpec, annotations)).toEqual([]);
  });

  it("refuses an unconfined AppArmor profile or annotation, naming who set it", () => {
    expect(
      only("forbidden AppArmor", { securityContext: { appArmorProfile: { type: "Unconfined" } } } as PodSpec),
    ).toEqual(['forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")']);
    expect(
      only("forbidden AppArmor", {
        securityContext: { appArmorProfile: { type: "RuntimeDefault" } },
        containers: [{ name: "foo" }],
        initContainers: [{ name: "bar", securityContext: { appArmorProfile: { type: "Unconfined" } } }],
      } as PodSpec),
    ).toEqual([
      'forbidden AppArmor profile (container "bar" must not set AppArmor profile type to "Unconfined")',
    ]);
    expect(
      only(
        "forbidden AppArmor",
        { containers: [] },
        {
          [aa]: "bogus",
          [`${aa}a`]: "",
          [`${aa}b`]: "runtime/default",
          [`${aa}c`]: "localhost/",
          [`${aa}d`]: "localhost/foo",
          [`${aa}e`]: "unconfined",
          [`${aa}f`]: "unknown",
        },
      ),
    ).toEqual([
      `forbidden AppArmor profiles (annotations must not set AppArmor profile type to "${aa}="bogus"", "${aa}e="unconfined"", "${aa}f="unknown"")`,
    ]);
  });

  it("refuses SELinux types outside the container types, and any user or role", () => {
    const selinux = (name: string, options: object) => ({
      name,
      securityContext: { seLinuxOptions: options },
    });
    const spec = {
      securityContext: { seLinuxOptions: { type: "foo", user: "bar", role: "baz" } },
      containers: [
        selinux("a", { type: "container_t" }),
        selinux("b", { type: "container_init_t" }),
        selinux("c", { type: "container_kvm_t" }),
        selinux("d", { type: "bar" }),
        selinux("e", { user: "bar" }),
        selinux("f", { role: "baz" }),
      ],
    } as PodSpec;
    expect(only("seLinuxOptions", spec)).toEqual([
      'seLinuxOptions (pod and containers "d", "e", "f" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set)',
    ]);
    const pod = { securityContext: { seLinuxOptions: { user: "u", role: "r" } }, containers: [] } as PodSpec;
    expect(only("seLinuxOptions", pod)).toEqual([
      "seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: user may not be set; role may not be set)",
    ]);
    // container_engine_t is allowed from v1.31 on.
    const engine = { containers: [selinux("x", { type: "container_engine_t" })] } as PodSpec;
    expect(podSecurityViolations("baseline", engine, {}, "latest")).toEqual([]);
    expect(podSecurityViolations("baseline", engine, {}, "v1.30")).toEqual([
      'seLinuxOptions (container "x" set forbidden securityContext.seLinuxOptions: type "container_engine_t")',
    ]);
  });

  it("refuses Windows host-process pods and containers", () => {
    const host = (name: string, hostProcess?: boolean) => ({
      name,
      securityContext: hostProcess === undefined ? {} : { windowsOptions: { hostProcess } },
    });
    const spec = {
      securityContext: { windowsOptions: { hostProcess: true } },
      containers: [{ name: "a" }, host("b"), host("d", false), host("e", true), host("f", true)],
    } as PodSpec;
    expect(only("hostProcess", spec)).toEqual([
      'hostProcess (pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true)',
    ]);
  });

  it("allows the sysctls of the pinned version", () => {
    const spec = {
      securityContext: { sysctls: [{ name: "net.ipv4.tcp_rmem", value: "4096 87380 6291456" }] },
      containers: [],
    } as PodSpec;
    expect(podSecurityViolations("baseline", spec)).toEqual([]);
    expect(podSecurityViolations("baseline", spec, {}, "v1.31")).toEqual([
      "forbidden sysctls (net.ipv4.tcp_rmem)",
    ]);
  });
});

describe("PodSecurity capabilities", () => {
  it("names every container that adds a forbidden capability, then the capabilities, sorted, once", () => {
    const adds = (name: string, add: string[], drop: string[] = []) => ({
      name,
      securityContext: { allowPrivilegeEscalation: false, capabilities: { add, drop } },
    });
    const spec = {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        adds("a", ["SYS_ADMIN", "CHOWN"], ["ALL"]),
        adds("b", ["NET_ADMIN", "SYS_ADMIN"]),
        adds("c", ["NET_BIND_SERVICE"], ["ALL"]),
      ],
    } as PodSpec;
    expect(podSecurityViolations("baseline", spec)).toEqual([
      'non-default capabilities (containers "a", "b" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)',
    ]);
    expect(podSecurityViolations("restricted", spec)).toEqual([
      'unrestricted capabilities (container "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b" must not include "CHOWN", "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)',
    ]);
  });
});

describe("PodSecurity restricted over baseline", () => {
  it("lists baseline's checks first, and replaces baseline's capabilities and seccomp checks with its own", () => {
    const spec = {
      hostNetwork: true,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "Unconfined" } },
      containers: [
        {
          name: "a",
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"], add: ["NET_ADMIN"] },
            seccompProfile: { type: "Unconfined" },
          },
        },
      ],
    } as PodSpec;
    expect(podSecurityViolations("baseline", spec)).toEqual([
      'non-default capabilities (container "a" must not include "NET_ADMIN" in securityContext.capabilities.add)',
      "host namespaces (hostNetwork=true)",
      'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")',
    ]);
    expect(podSecurityViolations("restricted", spec)).toEqual([
      "host namespaces (hostNetwork=true)",
      'unrestricted capabilities (container "a" must not include "NET_ADMIN" in securityContext.capabilities.add)',
      'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")',
    ]);
  });
});

afterEach(closeKubectlClusters);

describe("PodSecurity restricted at pinned versions, and Windows pods", () => {
  const windows: PodSpec = { ...nginx, os: { name: "windows" } };
  const allowPrivilegeEscalation =
    'allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false)';
  const capabilities =
    'unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"])';
  const runAsNonRoot =
    'runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true)';
  const seccomp =
    'seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

  it.each([
    // before v1.19 no seccomp check of restricted's, before v1.22 no capabilities check
    ["v1.18", nginx, [allowPrivilegeEscalation, runAsNonRoot]],
    ["v1.21", nginx, [allowPrivilegeEscalation, runAsNonRoot, seccomp]],
    ["v1.22", nginx, [allowPrivilegeEscalation, capabilities, runAsNonRoot, seccomp]],
    // a Windows pod is exempt from the Linux-only checks from v1.25 on
    ["v1.24", windows, [allowPrivilegeEscalation, capabilities, runAsNonRoot, seccomp]],
    ["v1.25", windows, [runAsNonRoot]],
    ["latest", windows, [runAsNonRoot]],
    [
      "latest",
      { ...nginx, os: { name: "linux" } },
      [allowPrivilegeEscalation, capabilities, runAsNonRoot, seccomp],
    ],
  ] as const)("restricted:%s", (version, spec, expected) => {
    expect(podSecurityViolations("restricted", spec, {}, version)).toEqual(expected);
  });

  it("applies baseline's capability check at restricted until restricted's own exists (v1.22), and runAsUser from v1.23", () => {
    const adding: PodSpec = {
      securityContext: { runAsNonRoot: true, runAsUser: 0, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "nginx",
          image: "nginx",
          securityContext: { allowPrivilegeEscalation: false, capabilities: { add: ["SYS_ADMIN"] } },
        },
      ],
    };
    expect(podSecurityViolations("restricted", adding, {}, "v1.21")).toEqual([
      'non-default capabilities (container "nginx" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
    ]);
    expect(podSecurityViolations("restricted", adding, {}, "v1.22")).toEqual([
      'unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]; container "nginx" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
    ]);
    expect(podSecurityViolations("restricted", adding, {}, "v1.23")).toEqual([
      'unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]; container "nginx" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
      "runAsUser=0 (pod must not set runAsUser=0)",
    ]);
  });
});

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
