import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { parallelizeUntil } from "./parallelize.js";

describe("parallelizeUntil", () => {
  it.each([
    { pieces: 1000, workers: 10, chunkSize: 1 },
    { pieces: 1000, workers: 10, chunkSize: 10 },
    { pieces: 1000, workers: 10, chunkSize: 100 },
    { pieces: 999, workers: 10, chunkSize: 13 },
    { pieces: 5, workers: 10, chunkSize: 1 },
  ])("visits each of $pieces pieces exactly once with $workers workers and chunks of $chunkSize", async (options) => {
    const seen = new Array<number>(options.pieces).fill(0);
    await parallelizeUntil(options, (piece) => {
      seen[piece]!++;
    });
    expect(seen.every((count) => count === 1)).toBe(true);
  });

  it("does nothing for zero pieces", async () => {
    let calls = 0;
    await parallelizeUntil({ workers: 4, pieces: 0 }, () => {
      calls++;
    });
    expect(calls).toBe(0);
  });

  it("runs at most `workers` asynchronous pieces at once", async () => {
    const clock = new FakeClock();
    let running = 0;
    let mostRunning = 0;
    const done = parallelizeUntil({ workers: 3, pieces: 10 }, async () => {
      running++;
      mostRunning = Math.max(mostRunning, running);
      await clock.sleep(10);
      running--;
    });
    await clock.advance(100);
    await done;
    expect(mostRunning).toBe(3);
    expect(running).toBe(0);
  });

  it("skips the pieces not yet started once the signal aborts, and resolves after the running ones end", async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const started: number[] = [];
    let finished = 0;
    const done = parallelizeUntil({ workers: 2, pieces: 10, signal: controller.signal }, async (piece) => {
      started.push(piece);
      await clock.sleep(10);
      finished++;
    });
    await clock.advance(5);
    controller.abort();
    let settled = false;
    void done.then(() => {
      settled = true;
    });
    await clock.flush();
    // Pieces 0 and 1 are still running: not settled yet.
    expect(settled).toBe(false);
    await clock.advance(5);
    await done;
    expect(settled).toBe(true);
    expect(started).toEqual([0, 1]);
    expect(finished).toBe(2);
  });

  it("rejects with the first error after the other workers stop, starting no new pieces", async () => {
    const clock = new FakeClock();
    const started: number[] = [];
    const done = parallelizeUntil({ workers: 2, pieces: 10 }, async (piece) => {
      started.push(piece);
      await clock.sleep(piece === 0 ? 5 : 10);
      if (piece === 0) throw new Error("piece 0 failed");
    });
    const outcome = done.catch((error: unknown) => error);
    await clock.advance(20);
    expect(await outcome).toEqual(new Error("piece 0 failed"));
    expect(started).toEqual([0, 1]);
  });

  it.each([
    [{ workers: 0, pieces: 1 }, "workers must be a positive integer, got 0"],
    [{ workers: 1, pieces: -1 }, "pieces must be a non-negative integer, got -1"],
    [{ workers: 1, pieces: 1, chunkSize: 0 }, "chunkSize must be a positive integer, got 0"],
  ])("rejects %o", async (options, message) => {
    await expect(parallelizeUntil(options, () => {})).rejects.toThrow(`parallelizeUntil: ${message}`);
  });
});
