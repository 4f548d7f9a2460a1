import { FakeClock, seededRandom } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";
import {
  type AllocationItem,
  computeConcurrencyAllocation,
  type LevelLimits,
  SeatDemandIntegrator,
  SeatDemandStats,
  updateBorrowing,
} from "./borrowing.js";

// Seat borrowing between priority levels, after upstream's conc_alloc_test.go
// (TestConcAlloc: random problems, the solution's defining properties
// checked), the integrator's and the config controller's behaviour.

/** Splits `total` into `parts` random non-negative parts (upstream's partition64). */
function partition(random: () => number, parts: number, total: number): number[] {
  const weights = Array.from({ length: parts }, () => random());
  const sum = weights.reduce((a, b) => a + b, 0) || 1;
  return weights.map((weight) => (total * weight) / sum);
}

const slack = 1e-10;

describe("computeConcurrencyAllocation (upstream's TestConcAlloc)", () => {
  it("sums to the required seats with each allocation its bound or the fair proportion of its target", () => {
    const random = seededRandom(1234567890);
    const int = (n: number) => Math.floor(random() * n);
    let solved = 0;
    let refused = 0;
    for (let i = 0; i < 10_000; i++) {
      let length = [0, 1, 2, 3, 4, 6, 9][int(7)]!;
      const items: { lowerBound: number; upperBound: number; target: number }[] = [];
      let lowSum = 0;
      let highSum = 0;
      let requiredSum = 0;
      const style = length === 0 ? 2 : int(20);
      if (length > 0 && style === 0) {
        requiredSum = int(length * 3);
        for (const x of partition(random, length, requiredSum))
          items.push({ lowerBound: x, target: x + 2 * random(), upperBound: x + 3 * random() });
      } else if (length > 0 && style === 1) {
        requiredSum = int(length * 3) + 1;
        for (const x of partition(random, length, requiredSum)) {
          const lowerBound = x * Math.max(0, 1.25 * random() - 1);
          items.push({ lowerBound, target: lowerBound + random(), upperBound: x });
        }
      } else {
        for (let j = 0; j < length; j++) {
          const x = Math.max(0, random() * 5 - 1);
          items.push({ lowerBound: x, target: x + 2 * random(), upperBound: x + 3 * random() });
        }
      }
      for (const item of items) {
        lowSum += item.lowerBound;
        highSum += item.upperBound;
      }
      if (length > 0 && style > 1) requiredSum = Math.round(lowSum + (highSum - lowSum) * random());
      while (random() < 0.25) {
        // A level with no demand at all.
        const item = { lowerBound: 0, target: 0, upperBound: random() + 0.00001 };
        highSum += item.upperBound;
        items.push(item);
        if (length > 1) {
          const m = int(length);
          [items[m], items[length]] = [items[length]!, items[m]!];
        }
        length = items.length;
      }
      const result = computeConcurrencyAllocation(requiredSum, items as AllocationItem[]);
      const expectRefusal = lowSum - requiredSum > slack || requiredSum - highSum > slack;
      if (result === undefined) {
        expect(expectRefusal).toBe(true);
        refused++;
        continue;
      }
      expect(expectRefusal).toBe(false);
      solved++;
      const { allocations, fairFrac } = result;
      const sum = allocations.reduce((a, b) => a + b, 0);
      expect(Math.abs(sum - requiredSum) / Math.max(1, Math.abs(requiredSum))).toBeLessThanOrEqual(slack);
      items.forEach((item, index) => {
        const fair = fairFrac * Math.max(item.target, 0.001);
        const allocation = allocations[index]!;
        if (fair <= item.lowerBound) expect(allocation).toBe(item.lowerBound);
        else if (fair >= item.upperBound) expect(allocation).toBe(item.upperBound);
        else expect(Math.abs(allocation - fair)).toBeLessThanOrEqual(slack * Math.max(1, fair));
      });
    }
    // Both kinds of problem occur.
    expect(solved).toBeGreaterThan(9_000);
    expect(refused).toBeGreaterThan(0);
  });

  it("shares by the targets when no bound holds, and answers nothing when the bounds cannot meet the sum", () => {
    expect(
      computeConcurrencyAllocation(10, [
        { lowerBound: 1, upperBound: 20, target: 2 },
        { lowerBound: 1, upperBound: 20, target: 3 },
      ]),
    ).toEqual({ allocations: [4, 6], fairFrac: 2 });
    expect(
      computeConcurrencyAllocation(10, [{ lowerBound: 11, upperBound: 20, target: 11 }]),
    ).toBeUndefined();
    expect(computeConcurrencyAllocation(10, [{ lowerBound: 1, upperBound: 5, target: 2 }])).toBeUndefined();
  });
});

describe("SeatDemandIntegrator (upstream's fairqueuing integrator)", () => {
  it("averages a stepped value over time, with its deviation and extremes, and starts again on reset", async () => {
    const clock = new FakeClock(0);
    const demand = new SeatDemandIntegrator(clock);
    demand.set(2);
    await clock.advance(1_000);
    demand.set(4);
    await clock.advance(1_000);
    expect(demand.reset()).toEqual({ duration: 2, average: 3, deviation: 1, min: 0, max: 4 });
    await clock.advance(2_000);
    // The value carries over: 4 throughout.
    expect(demand.reset()).toEqual({ duration: 2, average: 4, deviation: 0, min: 4, max: 4 });
    const empty = demand.reset();
    expect(empty.duration).toBe(0);
    expect(empty.average).toBeNaN();
  });

  it("smooths the demand's envelope, falling slowly and rising at once", () => {
    const stats = new SeatDemandStats();
    stats.update({ duration: 10, average: 8, deviation: 2, min: 0, max: 12 });
    expect(stats).toMatchObject({ average: 8, deviation: 2, highWatermark: 12, smoothed: 10 });
    stats.update({ duration: 10, average: 0, deviation: Number.NaN, min: 0, max: 0 });
    expect(stats.smoothed).toBeCloseTo(9.77, 10);
    expect(stats.deviation).toBe(0);
  });
});

async function level(
  name: string,
  nominal: number,
  lendable: number,
  borrowable: number,
  demand: number,
): Promise<LevelLimits> {
  const clock = new FakeClock(0);
  const integrator = new SeatDemandIntegrator(clock);
  integrator.set(demand);
  await clock.advance(10_000);
  return {
    exempt: name === "exempt",
    nominal,
    lower: nominal - lendable,
    upper: nominal + borrowable,
    current: nominal,
    target: 0,
    stats: new SeatDemandStats(),
    demand: integrator,
  };
}

describe("updateBorrowing (upstream's updateBorrowingLocked)", () => {
  it("lets a busy level borrow what the idle ones lend, up to its upper limit", async () => {
    const busy = await level("busy", 10, 0, 10, 30);
    const lender = await level("lender", 10, 8, 10, 0);
    const keeper = await level("keeper", 10, 0, 10, 0);
    const fairFrac = updateBorrowing([busy, lender, keeper]);
    // The busy level wants 30; the lender keeps only its 2, the keeper (lending nothing) its 10,
    // and the busy level gets the rest: 0.6 of what it wants.
    expect([busy.current, lender.current, keeper.current]).toEqual([18, 2, 10]);
    expect(busy.target).toBe(30);
    expect(fairFrac).toBeCloseTo(0.6, 10);
  });

  it("gives an exempt level what its demand peaked at, out of the seats the others share", async () => {
    const exempt = await level("exempt", 0, 0, 100, 5);
    const limited = await level("limited", 10, 5, 10, 0);
    updateBorrowing([exempt, limited]);
    // What the exempt level took leaves the limited one only what it keeps.
    expect(exempt.current).toBe(5);
    expect(limited.current).toBe(5);
  });

  it("on a fresh server with kube-apiserver's bootstrap levels, divides 600 seats as an idle cluster does", async () => {
    const api = new ApiServer({ flowControlBootstrap: true });
    try {
      await api.flowControl!.ready();
      await api.flush();
      for (let i = 0; i < 100 && api.flowControl!.levelLimits().size < 8; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      api.flowControl!.adjustLimits();
      const limits = Object.fromEntries(
        [...api.flowControl!.levelLimits()].map(([name, l]) => [
          name,
          [l.nominal, l.lower, l.upper, l.current],
        ]),
      );
      expect(limits).toEqual({
        "catch-all": [13, 13, 613, 30],
        exempt: [0, 0, 600, 0],
        "global-default": [49, 24, 649, 56],
        "leader-election": [25, 25, 625, 58],
        "node-high": [98, 73, 698, 170],
        system: [74, 50, 674, 117],
        "workload-high": [98, 49, 698, 114],
        "workload-low": [245, 24, 845, 56],
      });
      expect(api.flowControl!.fairFrac).toBeCloseTo(602 / 258, 12);
      expect(api.flowControl!.queueSets().get("workload-low")?.concurrencyLimit).toBe(56);
    } finally {
      await api.close();
    }
  });

  it("every 10 s on the server's clock, a level under load borrows seats the idle levels lend", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
    const api = new ApiServer({ clock, flowControlBootstrap: true });
    try {
      const flowControl = api.flowControl!;
      await flowControl.ready();
      await api.flush();
      for (let i = 0; i < 100 && flowControl.levelLimits().size < 8; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      flowControl.adjustLimits();
      const workloadLow = () => flowControl.levelLimits().get("workload-low")!;
      expect(workloadLow().current).toBe(56);
      // A service account's requests are workload-low's: 200 of them held for the whole period.
      const robot = { username: "system:serviceaccount:default:robot", groups: ["system:serviceaccounts"] };
      const held: (() => void)[] = [];
      const waiting: Promise<unknown>[] = [];
      for (let i = 0; i < 200; i++) {
        const admitted = flowControl.admit(robot, {
          attributes: () => ({
            user: robot,
            resourceRequest: true,
            verb: "create",
            apiGroup: "",
            resource: "pods",
            subresource: "",
            namespace: "default",
            name: "",
          }),
          cancel: () => new AbortController().signal,
        });
        if (admitted instanceof Promise) waiting.push(admitted.then((a) => held.push(a.release)));
        else held.push(admitted.release);
      }
      expect(held.length).toBe(56);
      await clock.advance(10_000);
      // Its demand held at 200 seats: its target is 200, and the 602 seats are dealt by target
      // (the idle levels' targets are what they keep), 602 / 434 of each: 277 for workload-low.
      expect(workloadLow().stats).toMatchObject({ highWatermark: 200, average: 200, smoothed: 200 });
      expect(workloadLow().target).toBe(200);
      expect(workloadLow().current).toBe(277);
      expect(flowControl.queueSets().get("workload-low")?.concurrencyLimit).toBe(277);
      await Promise.all(waiting);
      expect(held.length).toBe(200);
      for (const release of held) release();
    } finally {
      await api.close();
    }
  });
});
