import { type Logger, noopLogger } from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { completeLogger } from "./logger.js";

describe("completeLogger", () => {
  it("is the no-op logger when none is given", () => {
    expect(completeLogger(undefined)).toBe(noopLogger);
  });

  it("returns a full Logger as it is", () => {
    const logger: Logger = { ...noopLogger, child: () => logger };
    expect(completeLogger(logger)).toBe(logger);
  });

  it("fills in what an old LeaderElectionLogger lacks, passing the rest through", () => {
    const records: string[] = [];
    const logger = completeLogger({
      info: (_obj, msg) => records.push(`info ${msg}`),
      error: (_obj, msg) => records.push(`error ${msg}`),
    });
    logger.debug({}, "dropped");
    logger.warn({}, "dropped too");
    logger.info({}, "acquired");
    logger.child({ lock: "kube-system/x" }).error({}, "lost");
    expect(records).toEqual(["info acquired", "error lost"]);
  });
});
