import { describe, expect, it } from "vitest";
import { type HealthCheck, healthResponse, pingCheck } from "./health.js";

const failing: HealthCheck = { name: "leaderElection", check: () => new Error("failed election to renew") };
const throwing: HealthCheck = {
  name: "boom",
  check: () => {
    throw new Error("thrown");
  },
};

describe("healthResponse", () => {
  it("answers ok when every check passes", () => {
    expect(healthResponse("healthz", "", false, [pingCheck("a"), pingCheck("b")])).toEqual({
      status: 200,
      body: "ok",
    });
  });

  it("lists the checks and says passed when verbose", () => {
    expect(healthResponse("healthz", "", true, [pingCheck("a"), pingCheck("b")])).toEqual({
      status: 200,
      body: "[+]a ok\n[+]b ok\nhealthz check passed\n",
    });
  });

  it("answers 500, withholding reasons, when a check fails or throws", () => {
    expect(healthResponse("readyz", "", false, [pingCheck("a"), failing, throwing])).toEqual({
      status: 500,
      body: "[+]a ok\n[-]leaderElection failed: reason withheld\n[-]boom failed: reason withheld\nreadyz check failed\n",
    });
  });

  it("runs one check on its sub-path, and 404s an unknown one", () => {
    expect(healthResponse("healthz", "a", false, [pingCheck("a"), failing])).toEqual({
      status: 200,
      body: "ok",
    });
    expect(healthResponse("healthz", "leaderElection", false, [failing])).toEqual({
      status: 500,
      body: "internal server error: failed election to renew\n",
    });
    expect(healthResponse("healthz", "nope", false, [failing]).status).toBe(404);
  });
});
