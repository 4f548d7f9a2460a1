import { describe, expect, it, vi } from "vitest";
import { startEtcd } from "./etcd-process.js";

// The ports the next free-port probes report, whatever the kernel chose: a
// stand-in for another process that took them between the probe and etcd's start.
const forced = vi.hoisted(() => ({ ports: [] as number[] }));

vi.mock("node:net", async (importOriginal) => {
  const net = await importOriginal<typeof import("node:net")>();
  const createServer = ((...args: Parameters<typeof net.createServer>) => {
    const server = net.createServer(...args);
    const port = forced.ports.shift();
    if (port !== undefined) {
      server.address = () => ({ port, address: "127.0.0.1", family: "IPv4" });
    }
    return server;
  }) as typeof net.createServer;
  return { ...net, default: { ...net, createServer }, createServer };
});

async function memberNames(endpoint: string): Promise<string[]> {
  const response = await fetch(`${endpoint}/v3/cluster/member/list`, { method: "POST", body: "{}" });
  const body = (await response.json()) as { members: { name: string }[] };
  return body.members.map((m) => m.name);
}

describe("startEtcd", () => {
  it("does not take another etcd on its chosen ports for its own, and starts again on others", async () => {
    const first = await startEtcd();
    try {
      const listed = (await (
        await fetch(`${first.endpoints[0]}/v3/cluster/member/list`, { method: "POST", body: "{}" })
      ).json()) as { members: { peerURLs: string[] }[] };
      const port = (url: string) => Number(new URL(url).port);
      forced.ports = [port(first.endpoints[0]!), port(listed.members[0]!.peerURLs[0]!)];
      const second = await startEtcd();
      try {
        expect(forced.ports).toEqual([]);
        expect(second.endpoints).not.toEqual(first.endpoints);
        expect(await memberNames(second.endpoints[0]!)).toEqual([second.members[0]!.name]);
        expect(await memberNames(first.endpoints[0]!)).toEqual([first.members[0]!.name]);
        expect(second.members[0]!.name).not.toBe(first.members[0]!.name);
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  });
});
