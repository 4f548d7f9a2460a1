import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { listenAbort } from "./abort-listeners.js";

describe("listenAbort", () => {
  it("puts one listener on a signal however many wait on it, and calls each once on abort", () => {
    const controller = new AbortController();
    const called: number[] = [];
    const offs = Array.from({ length: 100 }, (_, i) => listenAbort(controller.signal, () => called.push(i)));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    offs[5]!();
    offs[5]!();
    controller.abort();
    controller.signal.dispatchEvent(new Event("abort"));
    expect(called).toHaveLength(99);
    expect(called).not.toContain(5);
  });

  it("does nothing without a signal", () => {
    expect(listenAbort(undefined, () => {})).toBeTypeOf("function");
  });
});
