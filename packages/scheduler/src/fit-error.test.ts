import { describe, expect, it } from "vitest";
import { fitErrorMessage, truncateMessage } from "./fit-error.js";
import type { Status } from "./framework.js";

const status = (...reasons: string[]): Status => ({ code: "Unschedulable", reasons });

describe("fitErrorMessage", () => {
  it("counts each reason over the nodes and sorts the items as strings", () => {
    const nodeToStatus = new Map<string, Status>([
      ["n1", status("Insufficient cpu", "Insufficient memory")],
      ["n2", status("Insufficient memory")],
      ["n3", status("node(s) didn't match Pod's node affinity/selector")],
    ]);
    for (let i = 4; i <= 13; i++) nodeToStatus.set(`n${i}`, status("Insufficient memory"));
    expect(fitErrorMessage(13, { nodeToStatus, unschedulablePlugins: new Set() })).toBe(
      "0/13 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 12 Insufficient memory.",
    );
  });

  it("uses the PreFilter message instead of the histogram, and appends the PostFilter text", () => {
    expect(
      fitErrorMessage(3, {
        nodeToStatus: new Map([["n1", status("Insufficient cpu")]]),
        preFilterMsg: "node(s) didn't satisfy plugin NodeAffinity",
        postFilterMsg: "preemption: not eligible due to preemptionPolicy=Never.",
        unschedulablePlugins: new Set(),
      }),
    ).toBe(
      "0/3 nodes are available: node(s) didn't satisfy plugin NodeAffinity. preemption: not eligible due to preemptionPolicy=Never.",
    );
  });

  it("without any status ends after the colon", () => {
    expect(fitErrorMessage(0, { nodeToStatus: new Map(), unschedulablePlugins: new Set() })).toBe(
      "0/0 nodes are available:",
    );
  });
});

describe("truncateMessage", () => {
  it("keeps 1024 characters, and cuts longer ones to 1020 plus ' ...'", () => {
    expect(truncateMessage("x".repeat(1024))).toBe("x".repeat(1024));
    const cut = truncateMessage("y".repeat(2000));
    expect(cut).toHaveLength(1024);
    expect(cut.endsWith("y ...")).toBe(true);
  });
});
