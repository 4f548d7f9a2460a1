import { describe, expect, it } from "vitest";
import type { RuntimePodStatus } from "./pleg.js";
import { runtimePodCleanups } from "./pod-cleanups.js";
import type { PodSandbox } from "./runtime/runtime.js";

const sandbox = (podUid: string, state: PodSandbox["state"]): PodSandbox => ({
  id: `s-${podUid}`,
  podUid,
  name: podUid,
  namespace: "d",
  attempt: 0,
  state,
  createdAt: 0,
  ip: undefined,
});

const status = (uid: string, running: boolean, ready: boolean): RuntimePodStatus => ({
  uid,
  name: uid,
  namespace: "d",
  sandboxes: [sandbox(uid, ready ? "ready" : "notready")],
  containers: running ? [{ state: "running" } as RuntimePodStatus["containers"][number]] : [],
  ips: [],
});

describe("runtimePodCleanups", () => {
  it("kills unknown pods that may still run, and removes what the workers are done with", () => {
    const statuses = new Map<string, RuntimePodStatus>([
      ["running", status("running", true, false)],
      ["ready", status("ready", false, true)],
      ["stopped", status("stopped", false, false)],
    ]);
    const result = runtimePodCleanups({
      sandboxes: ["known", "running", "ready", "stopped", "unseen", "known"].map((uid) =>
        sandbox(uid, "ready"),
      ),
      known: (uid) => uid === "known",
      statusOf: (uid) => statuses.get(uid),
      removable: (uid) => uid === "stopped" || uid === "known" || uid === "running",
    });
    expect(result.kill.map((pod) => pod.id)).toEqual(["running", "ready", "unseen"]);
    expect(result.remove).toEqual(["known", "stopped"]);
  });
});
