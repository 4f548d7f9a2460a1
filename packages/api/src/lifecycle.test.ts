import { describe, expect, it } from "vitest";
import { runSignal } from "./lifecycle.js";

describe("runSignal", () => {
  it("takes the signal from { signal }, or a bare signal as the older entry points did", () => {
    const controller = new AbortController();
    expect(runSignal({ signal: controller.signal })).toBe(controller.signal);
    expect(runSignal(controller.signal)).toBe(controller.signal);
  });

  it("rejects anything that is not a signal, saying what run needs", () => {
    expect(() => runSignal({ signal: undefined as never })).toThrow(
      "run needs { signal: AbortSignal }, got undefined",
    );
    expect(() => runSignal({} as never)).toThrow(TypeError);
  });
});
