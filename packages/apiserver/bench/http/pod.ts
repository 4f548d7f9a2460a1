// The pod of the HTTP benchmark: about 2.5 KB of JSON once the server has added
// its metadata (uid, resourceVersion, timestamps) and defaults.
import type { Pod } from "@reconcile/api";

export const benchNamespace = "default";

export function benchPod(i: number): Pod {
  const name = `bench-${String(i).padStart(6, "0")}`;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: benchNamespace,
      labels: {
        app: "bench",
        "app.kubernetes.io/name": "bench",
        "app.kubernetes.io/instance": `bench-${i % 100}`,
        "pod-template-hash": "5d8f7c9b6d",
        tier: i % 2 === 0 ? "frontend" : "backend",
      },
      annotations: {
        "kubectl.kubernetes.io/default-container": "app",
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9090",
        "kubernetes.io/change-cause":
          "kubectl set image deployment/bench app=registry.example.com/team/bench-app:v1.27.3 (rollout 42 of the bench service)",
        "bench/round": "0",
      },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "bench-5d8f7c9b6d",
          uid: "6f1c1d5e-7a2b-4c3d-9e8f-0a1b2c3d4e5f",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: `node-${i % 50}`,
      serviceAccountName: "default",
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: "app",
          image: "registry.example.com/team/bench-app:v1.27.3",
          args: ["--listen=:8080", "--metrics=:9090", "--log-level=info"],
          ports: [
            { name: "http", containerPort: 8080, protocol: "TCP" },
            { name: "metrics", containerPort: 9090, protocol: "TCP" },
          ],
          env: [
            { name: "POD_INDEX", value: String(i) },
            { name: "LOG_FORMAT", value: "json" },
            { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
            { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
          ],
          resources: {
            requests: { cpu: "100m", memory: "128Mi" },
            limits: { cpu: "500m", memory: "256Mi" },
          },
          readinessProbe: {
            httpGet: { path: "/readyz", port: 8080, scheme: "HTTP" },
            periodSeconds: 10,
            timeoutSeconds: 1,
            successThreshold: 1,
            failureThreshold: 3,
          },
          livenessProbe: {
            httpGet: { path: "/livez", port: 8080, scheme: "HTTP" },
            periodSeconds: 10,
            timeoutSeconds: 1,
            successThreshold: 1,
            failureThreshold: 3,
          },
          volumeMounts: [{ name: "config", mountPath: "/etc/bench", readOnly: true }],
          imagePullPolicy: "IfNotPresent",
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
        },
      ],
      volumes: [{ name: "config", configMap: { name: "bench-config", defaultMode: 420 } }],
      tolerations: [
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
        {
          key: "node.kubernetes.io/unreachable",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ],
    },
    status: {
      phase: "Running",
      podIP: `10.244.${(i >> 8) & 255}.${i & 255}`,
      hostIP: `192.168.0.${i % 50}`,
      conditions: [
        { type: "Initialized", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" },
        { type: "Ready", status: "True", lastTransitionTime: "2026-01-01T00:00:05Z" },
        { type: "ContainersReady", status: "True", lastTransitionTime: "2026-01-01T00:00:05Z" },
        { type: "PodScheduled", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" },
      ],
      containerStatuses: [
        {
          name: "app",
          ready: true,
          restartCount: 0,
          image: "registry.example.com/team/bench-app:v1.27.3",
          imageID:
            "registry.example.com/team/bench-app@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
          containerID: "containerd://8c1e1f0c5b7d4a2e9f3b6c8d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b",
          started: true,
          state: { running: { startedAt: "2026-01-01T00:00:03Z" } },
        },
      ],
    },
  } as Pod;
}
