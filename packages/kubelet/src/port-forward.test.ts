import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { portForwardInPod } from "./port-forward.js";
import type { ContainerRuntime } from "./runtime/runtime.js";

// The simulated runtime's answers to port-forward: declared ports answer with
// text naming who answered; the web servers' images listen where their
// images do and serve their default pages; anything else is refused.

const runtime = {
  listPodSandboxes: () => [{ id: "a".repeat(64), state: "ready" }],
  listContainers: () => [
    { name: "web", state: "running" },
    { name: "app", state: "running" },
    { name: "custom", state: "running" },
  ],
} as unknown as ContainerRuntime;

const pod = {
  metadata: { name: "p", namespace: "default", uid: "u" },
  spec: {
    containers: [
      { name: "web", image: "nginx:1.27" },
      { name: "app", image: "example.com/app", ports: [{ containerPort: 8080 }] },
      { name: "custom", image: "httpd", command: ["sleep", "3600"] },
    ],
  },
} as Pod;

/** Sends one request on a forwarded port and resolves to the whole answer. */
async function request(port: number, target: string): Promise<string> {
  const answer = portForwardInPod(runtime, [pod], "default", "p", port);
  if (!answer.ok) return `refused: ${answer.message}`;
  let text = "";
  answer.stream.onData((bytes) => {
    text += Buffer.from(bytes).toString();
  });
  const ended = new Promise<void>((resolve) => answer.stream.onEnd(() => resolve()));
  answer.stream.write(Buffer.from(`GET ${target} HTTP/1.1\r\nHost: p\r\n\r\n`));
  await ended;
  return text;
}

describe("port-forward in the simulated runtime", () => {
  it("nginx's image serves its welcome page on 80 and 404 elsewhere, undeclared", async () => {
    const welcome = await request(80, "/");
    expect(welcome).toMatch(
      /^HTTP\/1\.1 200 OK\r\nServer: nginx\/1\.27\.3\r\nContent-Type: text\/html\r\nContent-Length: 615\r\n/,
    );
    expect(welcome).toContain("<h1>Welcome to nginx!</h1>");
    expect(await request(80, "/missing")).toMatch(
      /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*<h1>404 Not Found<\/h1>/,
    );
  });

  it("a declared port answers naming the container; a web server with its own command and other ports refuse", async () => {
    expect(await request(8080, "/x")).toBe(
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 64\r\nConnection: close\r\n\r\nreconcile: default/p container app answered GET /x on port 8080\n",
    );
    expect(await request(81, "/")).toMatch(
      /^refused: error forwarding port 81 to pod a{64}, uid : .*connection refused/,
    );
  });
});
