import { describe, expect, it } from "vitest";
import { whenKnown } from "./plugin.js";

describe("whenKnown", () => {
  const next = (value: number, a?: string, b?: boolean) => `${value} ${a} ${b}`;

  it("answers within the call for a known value, passing on its arguments", () => {
    expect(whenKnown(1, next, "a", true)).toBe("1 a true");
    expect(whenKnown(2, (value: number) => value * 2)).toBe(4);
  });

  it("answers once a promised value is known, passing on the same arguments", async () => {
    const answer = whenKnown(Promise.resolve(3), next, "b", false);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toBe("3 b false");
    await expect(whenKnown(Promise.reject(new Error("gone")), next, "c", true)).rejects.toThrow("gone");
  });
});
