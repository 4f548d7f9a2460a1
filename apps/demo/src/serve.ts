// `npm run demo -- serve`: the control plane behind a real Kubernetes REST
// API on 127.0.0.1, for kubectl. Writes a kubeconfig, prints how to use it,
// and runs until Ctrl-C (or SIGTERM), then stops everything cleanly.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiServer } from "@reconcile/apiserver";
import { startControlPlane } from "./control-plane.js";
import { etcdFromArgs } from "./etcd-flags.js";

export async function serve(): Promise<boolean> {
  const port = Number(process.env.PORT ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`PORT must be a port number (0 for a free one), got ${JSON.stringify(process.env.PORT)}`);
    return false;
  }
  const etcd = await etcdFromArgs(process.argv.slice(3));
  if (typeof etcd === "string") {
    console.error(etcd);
    return false;
  }
  const server = new ApiServer({ storage: etcd.storage });
  const controlPlane = startControlPlane(server);
  const listening = await server.listen({ port, kubeletConnection: controlPlane.nodes.kubeletConnection() });
  await controlPlane.synced;
  const dir = mkdtempSync(join(tmpdir(), "reconcile-demo-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, listening.kubeconfig(), { mode: 0o600 });

  console.log(etcd.description);
  console.log(`API server on ${listening.url}, ReplicaSet and Deployment controllers and three simulated nodes running. Try:

  export KUBECONFIG=${kubeconfig}
  kubectl api-resources
  kubectl get nodes -o wide
  kubectl create -f - <<'YAML'
  apiVersion: apps/v1
  kind: ReplicaSet
  metadata: { name: web }
  spec:
    replicas: 3
    selector: { matchLabels: { app: web } }
    template:
      metadata: { labels: { app: web } }
      spec: { containers: [{ name: web, image: nginx:1.27 }] }
  YAML
  kubectl get rs,pods -o wide
  kubectl describe pod -l app=web
  kubectl logs -l app=web
  kubectl scale rs web --replicas=5 && kubectl get pods -w
  kubectl create deployment hello --image=nginx:1.27 --replicas=3
  kubectl rollout status deployment/hello
  kubectl set image deployment/hello nginx=nginx:1.28 && kubectl rollout status deployment/hello
  kubectl rollout history deployment/hello && kubectl rollout undo deployment/hello

Ctrl-C stops it.`);

  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  console.log("\nstopping…");
  await controlPlane.stop();
  await server.close();
  await etcd.stop();
  rmSync(dir, { recursive: true, force: true });
  return true;
}
