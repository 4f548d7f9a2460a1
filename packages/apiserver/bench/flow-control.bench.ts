// What API Priority and Fairness costs a request: GETs of one ConfigMap over HTTP on loopback (4 in
// flight, keep-alive) against a server with kube-apiserver's bootstrap FlowSchemas, with flow
// control and without. Each sample is a process of its own (the server and its client), so one
// variant's code and garbage never weigh on the other; the variants alternate. Once as a user
// (classified through the FlowSchemas to `global-default`, a limited level) and once as the admin
// (`exempt`, placed at once). Reported: the CPU time of a GET (server and client together) with and
// without, and the median of the paired differences. ROUNDS (default 10) rounds of GETS (default
// 20,000) each, after 5,000 warm-up GETs per process.
import { execFileSync } from "node:child_process";
import * as http from "node:http";
import { fileURLToPath } from "node:url";
import { clusterRoleBindings, configMaps } from "@reconcile/api";
import { type Measurement, median, writeResults } from "../../../tools/bench/index.js";
import { ApiServer } from "../src/index.js";

const rounds = Number(process.env.ROUNDS ?? 10);
const gets = Number(process.env.GETS ?? 20_000);
const tokens = { user: "bench-user", admin: "bench-admin" } as const;
type Who = keyof typeof tokens;

/** One sample, in this process: µs of CPU per GET. */
async function sample(flowControl: boolean, who: Who): Promise<number> {
  const api = new ApiServer({ flowControlBootstrap: true, ...(flowControl ? {} : { flowControl: false }) });
  const client = api.client();
  await client.resource(configMaps, "default").create({ metadata: { name: "x" }, data: { a: "b" } });
  await client.resource(clusterRoleBindings).create({
    metadata: { name: "jane-view" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "jane" }],
  });
  const listening = await api.listen({
    token: tokens.admin,
    users: [{ token: tokens.user, user: { username: "jane" } }],
  });
  await api.flush();
  const url = `${listening.url}/api/v1/namespaces/default/configmaps/x`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const get = () =>
    new Promise<void>((resolve, reject) => {
      http
        .get(url, { agent, headers: { authorization: `Bearer ${tokens[who]}` } }, (response) => {
          response.resume();
          response.on("end", () =>
            response.statusCode === 200
              ? resolve()
              : reject(new Error(`GET answered ${response.statusCode}`)),
          );
        })
        .on("error", reject);
    });
  const run = async (count: number) => {
    for (let i = 0; i < count / 4; i++) await Promise.all([get(), get(), get(), get()]);
  };
  await run(5000);
  const cpu = process.cpuUsage();
  await run(gets);
  const spent = process.cpuUsage(cpu);
  agent.destroy();
  await api.close();
  return (spent.user + spent.system) / gets;
}

const [, , childFlow, childWho] = process.argv;
if (childFlow !== undefined) {
  process.stdout.write(`\nsample ${JSON.stringify(await sample(childFlow === "on", childWho as Who))}\n`);
} else {
  const here = fileURLToPath(import.meta.url);
  const child = (flow: "on" | "off", who: Who): number => {
    const output = execFileSync(process.execPath, [...process.execArgv, here, flow, who], {
      encoding: "utf8",
      env: { ...process.env, GETS: String(gets) },
    });
    return Number(/^sample (.+)$/m.exec(output)?.[1]);
  };
  const measurements: Measurement[] = [];
  for (const who of ["user", "admin"] as const) {
    const label = who === "user" ? "a user (global-default)" : "the admin (exempt)";
    const withFlow: number[] = [];
    const without: number[] = [];
    const differences: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const first = round % 2 === 0 ? "on" : "off";
      const a = child(first, who);
      const b = child(first === "on" ? "off" : "on", who);
      const [on, off] = first === "on" ? [a, b] : [b, a];
      withFlow.push(on);
      without.push(off);
      differences.push(on - off);
    }
    console.log(
      `${label}: ${median(without).toFixed(1)} µs of CPU per GET without flow control, ${median(withFlow).toFixed(1)} with; paired difference ${median(differences).toFixed(1)} µs`,
    );
    measurements.push(
      {
        name: `${label}: CPU per GET, no flow control`,
        unit: "µs",
        higherIsBetter: false,
        runs: without,
        median: median(without),
      },
      {
        name: `${label}: CPU per GET, flow control`,
        unit: "µs",
        higherIsBetter: false,
        runs: withFlow,
        median: median(withFlow),
      },
      {
        name: `${label}: what flow control adds to a GET (paired by round)`,
        unit: "µs",
        higherIsBetter: false,
        runs: differences,
        median: median(differences),
      },
    );
  }
  writeResults("apiserver-flow-control", measurements, { rounds, gets });
}
