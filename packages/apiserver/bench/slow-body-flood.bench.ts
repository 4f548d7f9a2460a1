// A slow-body flood without a token (issue 33 item 8), over HTTP on loopback:
//
// 4,300 connections each announce a 100 kB body, send one byte of it, then one more byte every
// 2 s; meanwhile a client with a token sends one request a second on a new connection, for 20 s.
// Reports how many of the 20 legitimate requests were answered 200 (goal: all), their latency
// p50/p99, and how many flood connections the server still held at the end.
//
// One run (20 s of flood); run it again for another sample.
import { connect, type Socket } from "node:net";
import { type Measurement, median, writeResults } from "../../../tools/bench/index.js";
import { ApiServer } from "../src/index.js";

const floodConnections = 4_300;
const legitRequests = 20;

const server = new ApiServer();
const listening = await server.listen({ token: "t0ken" });
const { host, port } = new URL(listening.url);

const flood: Socket[] = [];
let refused = 0;
for (let i = 0; i < floodConnections; i++) {
  const socket = connect(Number(port), "127.0.0.1");
  socket.on("error", () => {});
  socket.on("close", () => refused++);
  socket.write(
    `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
  );
  flood.push(socket);
}
const trickle = setInterval(() => {
  for (const socket of flood) if (!socket.destroyed) socket.write(" ");
}, 2_000);

const latencies: number[] = [];
let served = 0;
for (let i = 0; i < legitRequests; i++) {
  const started = performance.now();
  try {
    const answer = await fetch(`${listening.url}/api/v1/namespaces/default/configmaps`, {
      headers: { authorization: "Bearer t0ken" },
      signal: AbortSignal.timeout(5_000),
    });
    await answer.arrayBuffer();
    if (answer.status === 200) served++;
    latencies.push(performance.now() - started);
  } catch {
    latencies.push(5_000);
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_000 - (performance.now() - started))));
}
clearInterval(trickle);
const held = flood.filter((socket) => !socket.destroyed).length;
latencies.sort((a, b) => a - b);
const p99 = latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * 0.99) - 1)]!;
const measurements: Measurement[] = [
  {
    name: "legitimate requests answered 200",
    unit: "requests",
    higherIsBetter: true,
    runs: [served],
    median: served,
    target: legitRequests,
  },
  {
    name: "legitimate request latency p50",
    unit: "ms",
    higherIsBetter: false,
    runs: latencies,
    median: median(latencies),
  },
  { name: "legitimate request latency p99", unit: "ms", higherIsBetter: false, runs: [p99], median: p99 },
  {
    name: "flood connections still held at the end",
    unit: "connections",
    higherIsBetter: false,
    runs: [held],
    median: held,
  },
];
for (const m of measurements)
  console.log(`${m.name}: ${Number.isInteger(m.median) ? m.median : m.median.toFixed(1)} ${m.unit}`);
console.log(`flood connections closed by the server: ${refused} of ${floodConnections}`);
writeResults("apiserver-slow-body-flood", measurements, { floodConnections, closedByServer: refused });
for (const socket of flood) socket.destroy();
await listening.close();
await server.close();
