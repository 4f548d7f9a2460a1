// What API Priority and Fairness costs a request: GETs of one ConfigMap over HTTP on loopback (4 in
// flight, keep-alive), on two servers with kube-apiserver's bootstrap FlowSchemas, one with flow
// control and one without, the two alternating round by round. Once as a user (classified through
// the FlowSchemas to `global-default`, a limited level) and once as the admin (`exempt`, placed at
// once). Reported: µs per GET on each, and the median over rounds of each round's
// difference. ROUNDS (default 20) rounds of GETS (default 2,000) after a warm-up round.
import * as http from "node:http";
import { clusterRoleBindings, configMaps } from "@reconcile/api";
import { type Measurement, median, writeResults } from "../../../tools/bench/index.js";
import { ApiServer } from "../src/index.js";

const rounds = Number(process.env.ROUNDS ?? 20);
const gets = Number(process.env.GETS ?? 2000);
const token = "bench-admin";
const userToken = "bench-user";

async function server(flowControl: boolean): Promise<{ api: ApiServer; url: string }> {
  const api = new ApiServer({ flowControlBootstrap: true, ...(flowControl ? {} : { flowControl: false }) });
  await api
    .client()
    .resource(configMaps, "default")
    .create({ metadata: { name: "x" }, data: { a: "b" } });
  await api
    .client()
    .resource(clusterRoleBindings)
    .create({
      metadata: { name: "jane-view" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "jane" }],
    });
  const listening = await api.listen({ token, users: [{ token: userToken, user: { username: "jane" } }] });
  await api.flush();
  return { api, url: `${listening.url}/api/v1/namespaces/default/configmaps/x` };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
function get(url: string, bearer: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${bearer}` };
    http
      .get(url, { agent, headers }, (response) => {
        response.resume();
        response.on("end", () =>
          response.statusCode === 200 ? resolve() : reject(new Error(`GET answered ${response.statusCode}`)),
        );
      })
      .on("error", reject);
  });
}

/** µs per GET of `count` GETs, 4 at a time. */
async function timeGets(url: string, bearer: string): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < gets / 4; i++) await Promise.all([1, 2, 3, 4].map(() => get(url, bearer)));
  return Number(process.hrtime.bigint() - started) / 1e3 / gets;
}

const on = await server(true);
const off = await server(false);
const measurements: Measurement[] = [];
for (const [who, bearer] of [
  ["a user (global-default)", userToken],
  ["admin (exempt)", token],
] as const) {
  const withFlow: number[] = [];
  const without: number[] = [];
  const differences: number[] = [];
  for (let round = -1; round < rounds; round++) {
    const order = round % 2 === 0 ? [on, off] : [off, on];
    const spent = new Map<string, number>();
    for (const target of order) spent.set(target.url, await timeGets(target.url, bearer));
    if (round < 0) continue;
    withFlow.push(spent.get(on.url)!);
    without.push(spent.get(off.url)!);
    differences.push(spent.get(on.url)! - spent.get(off.url)!);
  }
  console.log(
    `${who}: ${median(without).toFixed(1)} µs per GET without flow control, ${median(withFlow).toFixed(1)} with; paired difference ${median(differences).toFixed(1)} µs`,
  );
  measurements.push(
    {
      name: `${who}: GET without flow control`,
      unit: "µs",
      higherIsBetter: false,
      runs: without,
      median: median(without),
    },
    {
      name: `${who}: GET with flow control`,
      unit: "µs",
      higherIsBetter: false,
      runs: withFlow,
      median: median(withFlow),
    },
    {
      name: `${who}: what flow control adds to a GET (paired by round)`,
      unit: "µs",
      higherIsBetter: false,
      runs: differences,
      median: median(differences),
    },
  );
}
writeResults("apiserver-flow-control", measurements, { rounds, gets });
agent.destroy();
await on.api.close();
await off.api.close();
