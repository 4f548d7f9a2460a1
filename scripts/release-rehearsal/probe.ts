// A user's program against the published packages, for the release rehearsal:
// it must type-check under every module resolution (the `@ts-expect-error`
// lines fail if a Kubernetes type has silently become `any`) and run.
import { strict as assert } from "node:assert";
import {
  type ConfigMap,
  configMaps,
  isNotFound,
  type Pod,
  parseSelector,
  pods,
  type ReplicaSet,
  StatusError,
} from "@reconcile/api";
import { ApiServer } from "@reconcile/apiserver";
import { loadKubeConfig } from "@reconcile/client";
import { FakeClock } from "@reconcile/clock";
import { runWorkers } from "@reconcile/controller";
import * as deployment from "@reconcile/deployment";
import { ControllerExpectations } from "@reconcile/expectations";
import { SharedInformerFactory } from "@reconcile/informer";
import * as kubelet from "@reconcile/kubelet";
import { LeaseLock } from "@reconcile/leader-election";
import { ReplicaSetController } from "@reconcile/replicaset";
import * as scheduler from "@reconcile/scheduler";
import * as storageEtcd from "@reconcile/storage-etcd";
import { RateLimitingQueue } from "@reconcile/workqueue";

// Kubernetes types are real types, not `any`.
// @ts-expect-error metadata.name is a string
const badName: ConfigMap = { metadata: { name: 42 } };
// @ts-expect-error a container has no field `imagee`
const badPod: Pod = { spec: { containers: [{ name: "web", imagee: "nginx" }] } };
// @ts-expect-error replicas is a number
const badReplicaSet: ReplicaSet = { spec: { replicas: "3", selector: {}, template: {} } };
void [badName, badPod, badReplicaSet];

const server = new ApiServer();
const client = server.client();
const created = await client
  .resource(configMaps, "default")
  .create({ metadata: { name: "probe" }, data: { a: "1" } });
// @ts-expect-error data values are strings
const badData: number = created.data?.a;
void badData;
assert.equal(created.metadata?.name, "probe");

// StatusError.code is the HTTP status code; the reason says why.
const missing = await client
  .resource(pods, "default")
  .get("absent")
  .catch((error: unknown) => error);
assert.ok(StatusError.isInstance(missing) && isNotFound(missing));
const code: number = missing.code;
// @ts-expect-error code is a number, not a string
const codeText: string = missing.code;
void codeText;
assert.deepEqual([code, missing.reason], [404, "NotFound"]);

// Informers hand out read-only objects.
const factory = new SharedInformerFactory({ client, namespace: "default" });
const lister = factory.lister<ConfigMap>(configMaps);
const stop = new AbortController();
factory.start(stop.signal);
await factory.waitForCacheSync(stop.signal, { timeoutMs: 10_000 });
const cached = lister.byNamespace("default").get("probe");
// @ts-expect-error cached objects are read-only
if (cached?.metadata) cached.metadata.name = "renamed";
assert.equal(cached?.data?.a, "1");

// A worker loop over a rate-limited queue.
const queue = new RateLimitingQueue<string>();
const synced: string[] = [];
queue.add("default/probe");
await runWorkers({
  queue,
  workers: 1,
  signal: stop.signal,
  sync: async (key) => {
    synced.push(key);
    stop.abort();
  },
});
assert.deepEqual(synced, ["default/probe"]);
await factory.shutdown();

// Controllers, expectations, leader election, selectors, the fake clock.
const clock = new FakeClock();
const expectations = new ControllerExpectations({ clock });
expectations.expectCreations("default/web", 1);
assert.equal(expectations.satisfiedExpectations("default/web"), false);
assert.equal(parseSelector("app=web").matches({ app: "web" }), true);
const replicaSets = ReplicaSetController.fromInformerFactory(new SharedInformerFactory({ client }), {
  client,
});
assert.equal(typeof replicaSets.run, "function");
const lock = new LeaseLock({ client, namespace: "kube-system", name: "probe", identity: "probe-1" });
assert.equal(typeof lock.get, "function");
for (const [name, exports] of Object.entries({ deployment, kubelet, scheduler, storageEtcd })) {
  assert.ok(Object.keys(exports).length > 0, `${name} exports something`);
}

// A kubeconfig is read without @kubernetes/client-node: our own loader, as client-go's.
const kubeConfig = await loadKubeConfig({
  yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: apps}}]
current-context: x
`,
});
assert.equal(kubeConfig.getCurrentCluster()?.server, "https://127.0.0.1:6443");
assert.equal(kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace, "apps");

await server.close();
console.log("probe: every package loaded, typed and ran");
