import { describe, expect, it } from "vitest";
import { RuntimeError } from "./runtime.js";

describe("RuntimeError.withoutStack", () => {
  it("is a RuntimeError with its code and message and no stack frames, and leaves the stack limit as it was", () => {
    const before = Error.stackTraceLimit;
    const error = RuntimeError.withoutStack("InvalidState", "container c1 exited");
    expect(RuntimeError.isInstance(error)).toBe(true);
    expect([error.code, error.message, error.name]).toEqual([
      "InvalidState",
      "container c1 exited",
      "RuntimeError",
    ]);
    expect(error.stack).toBe("RuntimeError: container c1 exited");
    expect(Error.stackTraceLimit).toBe(before);
    // An ordinary one still has its frames.
    expect(new RuntimeError("InvalidState", "x").stack?.split("\n").length).toBeGreaterThan(1);
  });
});
