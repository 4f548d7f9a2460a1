// The list/watch server of the informer benchmark, run in its own process:
// `server.ts <pods>`. Everything is serialized before it listens, so that the
// clients, not the server, are what is measured.
//   GET /api/v1/pods            the list (any limit is ignored, as the watch cache does at resourceVersion 0)
//   GET /api/v1/pods?watch=...  a watch that stays open (a watch list first streams every pod and the
//                               bookmark that ends them, with sendInitialEvents=true)
//   GET /burst                  writes the MODIFIED burst to every open watch, then answers
import { createServer, type ServerResponse } from "node:http";
import { benchPod, listResourceVersion } from "./pods.js";

const podCount = Number(process.argv[2]);
const burstEvents = Number(process.argv[3] ?? 100_000);
if (!(podCount > 0)) throw new Error("usage: server.ts <pods> [burstEvents]");

const items: string[] = [];
for (let i = 0; i < podCount; i++) items.push(JSON.stringify(benchPod(i)));
const listBody = Buffer.from(
  `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${listResourceVersion}"},"items":[${items.join(",")}]}`,
);

// Each burst line is a template with a 7-digit resourceVersion patched in.
const placeholder = `"resourceVersion":"${listResourceVersion}"`;
const burstPods = Math.min(podCount, 10_000);
const templates: { prefix: Buffer; suffix: Buffer }[] = [];
for (let i = 0; i < burstPods; i++) {
  const line = `{"type":"MODIFIED","object":${items[i]}}\n`;
  const at = line.indexOf(placeholder) + '"resourceVersion":"'.length;
  templates.push({ prefix: Buffer.from(line.slice(0, at)), suffix: Buffer.from(line.slice(at + 7)) });
}
// A watch list's stream (`sendInitialEvents=true`): every pod ADDED, then the bookmark that ends the state.
const initialEvents = Buffer.from(
  `${items.map((item) => `{"type":"ADDED","object":${item}}\n`).join("")}{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"${listResourceVersion}","annotations":{"k8s.io/initial-events-end":"true"}}}}\n`,
);
items.length = 0;

const watches = new Set<ServerResponse>();
let watchOpened: (() => void) | undefined;

async function burst(): Promise<void> {
  while (watches.size === 0) await new Promise<void>((resolve) => (watchOpened = resolve));
  const batch = 500;
  for (let start = 0; start < burstEvents; start += batch) {
    const parts: Buffer[] = [];
    for (let k = start; k < Math.min(start + batch, burstEvents); k++) {
      const template = templates[k % burstPods]!;
      parts.push(template.prefix, Buffer.from(String(listResourceVersion + 1 + k)), template.suffix);
    }
    const chunk = Buffer.concat(parts);
    const writes: Promise<void>[] = [];
    for (const res of watches) {
      if (!res.write(chunk)) writes.push(new Promise((resolve) => res.once("drain", resolve)));
    }
    await Promise.all(writes);
  }
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === "/burst") {
    void burst().then(() => res.end("ok"));
    return;
  }
  if (url.pathname === "/healthz") {
    res.end("ok");
    return;
  }
  if (url.pathname !== "/api/v1/pods") {
    res.writeHead(404).end();
    return;
  }
  if (url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1") {
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    if (url.searchParams.get("sendInitialEvents") === "true") res.write(initialEvents);
    watches.add(res);
    res.on("close", () => watches.delete(res));
    watchOpened?.();
    watchOpened = undefined;
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "content-length": listBody.length });
  res.end(listBody);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  process.stdout.write(`listening ${address.port} ${(listBody.length / podCount).toFixed(0)}\n`);
});
process.on("SIGTERM", () => {
  for (const res of watches) res.destroy();
  server.close(() => process.exit(0));
});
