// Deterministic ~2.5 KB pods, shaped like what a Deployment's pods look like
// on a real cluster (managedFields included: they are a large share of a pod).
import type { Pod } from "@reconcile/api";

export const listResourceVersion = 1_000_000;

export function benchPod(i: number): Pod {
  const ns = `team-${i % 50}`;
  const app = `app-${i % 200}`;
  const hash = (i * 2654435761).toString(16).padStart(8, "0").slice(-8);
  const name = `${app}-${hash}-${(i % 100000).toString(36).padStart(5, "0")}`;
  const time = "2026-01-01T00:00:00Z";
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: ns,
      uid: `0000${hash}-1111-2222-3333-${i.toString(16).padStart(12, "0")}`,
      resourceVersion: String(listResourceVersion),
      creationTimestamp: time,
      generateName: `${app}-${hash}-`,
      labels: { app, "pod-template-hash": hash, tier: i % 2 ? "backend" : "frontend" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: `${app}-${hash}`,
          uid: `aaaa${hash}-bbbb-cccc-dddd-${i.toString(16).padStart(12, "0")}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "v1",
          time,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": {
              "f:generateName": {},
              "f:labels": { ".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {} },
            },
            "f:spec": {
              "f:containers": {
                'k:{"name":"main"}': {
                  ".": {},
                  "f:image": {},
                  "f:imagePullPolicy": {},
                  "f:name": {},
                  "f:ports": { ".": {}, 'k:{"containerPort":8080,"protocol":"TCP"}': { ".": {} } },
                  "f:resources": { ".": {}, "f:limits": {}, "f:requests": {} },
                },
              },
              "f:dnsPolicy": {},
              "f:restartPolicy": {},
              "f:schedulerName": {},
              "f:terminationGracePeriodSeconds": {},
            },
          },
        },
        {
          manager: "kubelet",
          operation: "Update",
          apiVersion: "v1",
          time,
          fieldsType: "FieldsV1",
          subresource: "status",
          fieldsV1: {
            "f:status": {
              "f:conditions": {
                'k:{"type":"Ready"}': { ".": {}, "f:lastTransitionTime": {}, "f:status": {} },
              },
              "f:containerStatuses": {},
              "f:hostIP": {},
              "f:phase": {},
              "f:podIP": {},
              "f:startTime": {},
            },
          },
        },
      ],
    },
    spec: {
      containers: [
        {
          name: "main",
          image: `registry.example.com/${app}:1.${i % 10}.0`,
          imagePullPolicy: "IfNotPresent",
          ports: [{ containerPort: 8080, protocol: "TCP" }],
          env: [{ name: "LOG_LEVEL", value: "info" }],
          resources: { limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      nodeName: `node-${i % 100}`,
      schedulerName: "default-scheduler",
      tolerations: [
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
    },
    status: {
      phase: "Running",
      conditions: [
        { type: "Ready", status: "True", lastTransitionTime: time },
        { type: "ContainersReady", status: "True", lastTransitionTime: time },
        { type: "PodScheduled", status: "True", lastTransitionTime: time },
      ],
      hostIP: `10.0.${i % 100}.1`,
      podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      startTime: time,
      containerStatuses: [
        {
          name: "main",
          state: { running: { startedAt: time } },
          ready: true,
          restartCount: 0,
          image: `registry.example.com/${app}:1.${i % 10}.0`,
          imageID: "",
          containerID: `containerd://${hash.repeat(4)}`,
          started: true,
        },
      ],
      qosClass: "Burstable",
    },
  };
}
