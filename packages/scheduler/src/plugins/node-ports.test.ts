// Cases from upstream's nodeports node_ports_test.go (TestNodePorts).
import type { Pod } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { errReasonNodePorts, nodePorts, portsConflict } from "./node-ports.js";
import { node, nodeInfoOf, runFilter } from "./testing.js";

/** A pod with host ports given as "proto/ip/port" (upstream's newPod helper). */
function podWithPorts(...hostPorts: string[]): Pod {
  return {
    metadata: { name: "p", uid: `uid-${Math.random()}` },
    spec: {
      containers: [
        {
          name: "c",
          ports: hostPorts.map((spec) => {
            const [protocol, hostIP, port] = spec.split("/");
            return {
              containerPort: Number(port),
              hostPort: Number(port),
              protocol: protocol!,
              hostIP: hostIP!,
            };
          }),
        },
      ],
    },
  };
}

const fits = { code: "Success", reasons: [] };
const conflict = { code: "Unschedulable", reasons: [errReasonNodePorts] };

describe("NodePorts Filter", () => {
  it.each([
    { name: "nothing running", pod: podWithPorts(), existing: [], want: fits },
    {
      name: "other port",
      pod: podWithPorts("UDP/127.0.0.1/8080"),
      existing: [podWithPorts("UDP/127.0.0.1/9090")],
      want: fits,
    },
    {
      name: "same udp port",
      pod: podWithPorts("UDP/127.0.0.1/8080"),
      existing: [podWithPorts("UDP/127.0.0.1/8080")],
      want: conflict,
    },
    {
      name: "same tcp port",
      pod: podWithPorts("TCP/127.0.0.1/8080"),
      existing: [podWithPorts("TCP/127.0.0.1/8080")],
      want: conflict,
    },
    {
      name: "different host ip",
      pod: podWithPorts("TCP/127.0.0.1/8080"),
      existing: [podWithPorts("TCP/127.0.0.2/8080")],
      want: fits,
    },
    {
      name: "different protocol",
      pod: podWithPorts("UDP/127.0.0.1/8080"),
      existing: [podWithPorts("TCP/127.0.0.1/8080")],
      want: fits,
    },
    {
      name: "second udp port conflict",
      pod: podWithPorts("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
      existing: [podWithPorts("UDP/127.0.0.1/8080")],
      want: conflict,
    },
    {
      name: "first tcp port conflict",
      pod: podWithPorts("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
      existing: [podWithPorts("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")],
      want: conflict,
    },
    {
      name: "first tcp port conflict due to 0.0.0.0 hostIP",
      pod: podWithPorts("TCP/0.0.0.0/8001"),
      existing: [podWithPorts("TCP/127.0.0.1/8001")],
      want: conflict,
    },
    {
      name: "TCP hostPort conflict due to 0.0.0.0 hostIP",
      pod: podWithPorts("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
      existing: [podWithPorts("TCP/127.0.0.1/8001")],
      want: conflict,
    },
    {
      name: "second tcp port conflict to 0.0.0.0 hostIP",
      pod: podWithPorts("TCP/127.0.0.1/8001"),
      existing: [podWithPorts("TCP/0.0.0.0/8001")],
      want: conflict,
    },
    {
      name: "second different protocol",
      pod: podWithPorts("UDP/127.0.0.1/8001"),
      existing: [podWithPorts("TCP/0.0.0.0/8001")],
      want: fits,
    },
    {
      name: "UDP hostPort conflict due to 0.0.0.0 hostIP",
      pod: podWithPorts("UDP/127.0.0.1/8001"),
      existing: [podWithPorts("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")],
      want: conflict,
    },
  ] as { name: string; pod: Pod; existing: Pod[]; want: object }[])("$name", ({ pod, existing, want }) => {
    expect(runFilter(nodePorts, pod, nodeInfoOf(node("n"), existing))).toEqual(want);
  });

  it("frees a port when the pod holding it leaves the node", () => {
    const holder = podWithPorts("TCP/0.0.0.0/80");
    const info = nodeInfoOf(node("n"), [holder]);
    expect(runFilter(nodePorts, podWithPorts("TCP/0.0.0.0/80"), info)).toEqual(conflict);
    info.removePod(holder.metadata!.uid!);
    expect(runFilter(nodePorts, podWithPorts("TCP/0.0.0.0/80"), info)).toEqual(fits);
    expect(portsConflict([], [{ ip: "0.0.0.0", protocol: "TCP", port: 80 }])).toBe(false);
  });
});
