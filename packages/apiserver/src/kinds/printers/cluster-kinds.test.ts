import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../../testing/index.js";

// kubectl get prints kube-apiserver's columns for the policy, networking, scheduling and storage kinds.

afterEach(closeKubectlClusters);

/** The table kubectl prints, cells split on runs of two spaces, the AGE cell (`0s`…) replaced by `AGE`. */
const table = (text: string) =>
  text
    .trimEnd()
    .split("\n")
    .map((line) =>
      line
        .trim()
        .split(/\s{2,}/)
        .map((cell) => (/^\d+s$/.test(cell) ? "AGE" : cell)),
    );

const manifests = `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: at-least-two }
spec: { minAvailable: 2, selector: { matchLabels: { app: web } } }
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: a-fifth }
spec: { maxUnavailable: "20%", selector: { matchLabels: { app: web } } }
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: many }
spec:
  ingressClassName: nginx
  tls: [{ hosts: [a.example.com] }]
  rules:
  - { host: a.example.com }
  - { host: b.example.com }
  - { host: c.example.com }
  - { host: d.example.com }
  - { host: e.example.com }
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: catch-all }
spec: { defaultBackend: { service: { name: web, port: { number: 80 } } } }
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: { name: nginx }
spec: { controller: k8s.io/ingress-nginx, parameters: { apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb } }
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: deny-all }
spec: { podSelector: {} }
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: web-only }
spec: { podSelector: { matchLabels: { app: web, tier: fe } } }
---
apiVersion: v1
kind: ResourceQuota
metadata: { name: compute }
spec: { hard: { requests.cpu: "1000m", requests.memory: 1Gi, limits.cpu: "2", limits.memory: 2Gi, pods: "10" } }
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: { name: high }
value: 1000000
globalDefault: false
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: { name: fast, annotations: { storageclass.kubernetes.io/is-default-class: "true" } }
provisioner: example.com/ssd
allowVolumeExpansion: true
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: { name: slow }
provisioner: example.com/hdd
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: { name: pv0 }
spec:
  capacity: { storage: 5Gi }
  accessModes: [ReadWriteMany, ReadWriteOnce, ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: slow
  claimRef: { namespace: default, name: data }
  hostPath: { path: /tmp/pv0 }
`;

describe("kubectl get for the policy, networking, scheduling and storage kinds", () => {
  it("prints upstream's columns and cells", async () => {
    const { kubectl, file } = await kubectlCluster({ kubernetesService: false });
    const applied = await kubectl(["apply", "-f", await file("kinds.yaml", manifests)]);
    expect(applied.code, applied.stderr).toBe(0);
    const get = async (...args: string[]) => table((await kubectl(["get", ...args])).stdout);

    expect(await get("pdb")).toEqual([
      ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"],
      ["a-fifth", "N/A", "20%", "0", "AGE"],
      ["at-least-two", "2", "N/A", "0", "AGE"],
    ]);
    expect(await get("ingress")).toEqual([
      ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
      ["catch-all", "<none>", "*", "80", "AGE"],
      ["many", "nginx", "a.example.com,b.example.com,c.example.com + 2 more...", "80, 443", "AGE"],
    ]);
    expect(await get("ingressclass")).toEqual([
      ["NAME", "CONTROLLER", "PARAMETERS", "AGE"],
      ["nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "AGE"],
    ]);
    expect(await get("networkpolicy")).toEqual([
      ["NAME", "POD-SELECTOR", "AGE"],
      ["deny-all", "<none>", "AGE"],
      ["web-only", "app=web,tier=fe", "AGE"],
    ]);
    // A quota's usage comes from its status, which a quota controller writes; none runs here.
    expect(await get("quota")).toEqual([
      ["NAME", "AGE", "REQUEST", "LIMIT"],
      [
        "compute",
        "AGE",
        "pods: 0/0, requests.cpu: 0/0, requests.memory: 0/0",
        "limits.cpu: 0/0, limits.memory: 0/0",
      ],
    ]);
    expect(await get("priorityclass", "high")).toEqual([
      ["NAME", "VALUE", "GLOBAL-DEFAULT", "PREEMPTION-POLICY", "AGE"],
      ["high", "1000000", "false", "PreemptLowerPriority", "AGE"],
    ]);
    expect(await get("storageclass")).toEqual([
      ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"],
      ["fast (default)", "example.com/ssd", "Delete", "Immediate", "true", "AGE"],
      ["slow", "example.com/hdd", "Retain", "WaitForFirstConsumer", "false", "AGE"],
    ]);
    expect(await get("pv", "-o", "wide")).toEqual([
      [
        "NAME",
        "CAPACITY",
        "ACCESS MODES",
        "RECLAIM POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "REASON",
        "AGE",
        "VOLUMEMODE",
      ],
      [
        "pv0",
        "5Gi",
        "RWO,RWX",
        "Retain",
        // Pending until a binder controller looks at it (none runs here), as kube-apiserver creates it.
        "Pending",
        "default/data",
        "slow",
        "<unset>",
        "AGE",
        "Filesystem",
      ],
    ]);
  });
});
