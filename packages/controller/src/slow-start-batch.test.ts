import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slowStartBatch } from "./slow-start-batch.js";

describe("slowStartBatch", () => {
  it("issues batches of 1, 2, 4, 3 for ten successful calls", async () => {
    const batches: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let currentBatch = 0;
    const result = await slowStartBatch(10, 1, async () => {
      inFlight++;
      currentBatch++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await Promise.resolve();
      inFlight--;
      if (inFlight === 0) {
        batches.push(currentBatch);
        currentBatch = 0;
      }
    });
    expect(result).toEqual({ successes: 10, error: undefined });
    expect(batches).toEqual([1, 2, 4, 3]);
    expect(maxInFlight).toBe(4);
  });

  it("stops after the first batch with a failure and counts only the successes", async () => {
    const boom = new Error("quota exceeded");
    const calls: number[] = [];
    // Calls 0..2 succeed (batches 1 and 2), call 4 fails inside the third batch (3..6).
    const result = await slowStartBatch(10, 1, async (index) => {
      calls.push(index);
      if (index === 4) throw boom;
    });
    expect(calls).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(result.successes).toBe(6);
    expect(result.error).toBe(boom);
  });

  it("reports the first error of the failing batch", async () => {
    const result = await slowStartBatch(3, 3, async (index) => {
      throw new Error(`call ${index}`);
    });
    expect(result.successes).toBe(0);
    expect((result.error as Error).message).toBe("call 0");
  });

  it("treats a synchronous throw as a failed call", async () => {
    const result = await slowStartBatch(2, 2, (index) => {
      if (index === 1) throw new Error("sync");
      return Promise.resolve();
    });
    expect(result.successes).toBe(1);
    expect((result.error as Error).message).toBe("sync");
  });

  it("makes no call for a count of zero", async () => {
    let calls = 0;
    const result = await slowStartBatch(0, 1, async () => {
      calls++;
    });
    expect(result).toEqual({ successes: 0, error: undefined });
    expect(calls).toBe(0);
  });

  it.each([
    [-1, 1, "count must be a non-negative integer, got -1"],
    [1.5, 1, "count must be a non-negative integer, got 1.5"],
    [3, 0, "initialBatchSize must be a positive integer, got 0"],
  ])("rejects count %s with initial batch %s", async (count, initial, message) => {
    await expect(slowStartBatch(count, initial, async () => {})).rejects.toThrow(message);
  });

  it("makes exactly the calls of the batches up to the first failing one", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 8 }),
        fc.option(fc.integer({ min: 0, max: 299 }), { nil: undefined }),
        async (count, initial, failAt) => {
          const calls: number[] = [];
          const result = await slowStartBatch(count, initial, async (index) => {
            calls.push(index);
            if (index === failAt) throw new Error("fail");
          });
          // The batch sizes: initial, doubled each time, the last one cut to what remains.
          let expectedCalls = 0;
          let failed = false;
          for (let remaining = count, size = Math.min(count, initial); size > 0 && !failed; ) {
            if (failAt !== undefined && failAt >= expectedCalls && failAt < expectedCalls + size)
              failed = true;
            expectedCalls += size;
            remaining -= size;
            size = Math.min(2 * size, remaining);
          }
          expect(calls.length).toBe(expectedCalls);
          expect(result.successes).toBe(failed ? expectedCalls - 1 : expectedCalls);
          expect(result.error === undefined).toBe(!failed);
        },
      ),
    );
  });
});
