import { FakeClock } from "@reconcile/clock";
import { afterAll, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { mutationFuzz } from "../testing/index.js";

// Valid objects of every kind, mutated and sent over every write route (testing/mutation-fuzz.ts):
// no answer may be a 5xx. FUZZ_SEED and FUZZ_RUNS explore further
// (`FUZZ_SEED=$RANDOM FUZZ_RUNS=20000 pnpm exec vitest run src/http/mutation-fuzz.test.ts`).

const seed = Number(process.env.FUZZ_SEED ?? 20_261_129);
const requests = Number(process.env.FUZZ_RUNS ?? 1_500);

const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
afterAll(() => api.close());

describe("the mutation fuzzer, in memory", () => {
  it(
    "gets no 5xx and a Status with every failure, over every route, with an admin's token",
    async () => {
      const listening = await api.listen({ token: "t0ken" });
      try {
        const report = await mutationFuzz({ url: listening.url, token: "t0ken", seed, requests });
        expect(report.failures).toEqual([]);
        expect(report.requests).toBeGreaterThanOrEqual(requests);
        // The mutations reach past the decoder: some writes are accepted, most refused.
        expect(report.codes["201"]).toBeGreaterThan(requests / 10);
        expect((report.codes["400"] ?? 0) + (report.codes["422"] ?? 0)).toBeGreaterThan(requests / 10);
      } finally {
        await listening.close();
      }
    },
    60_000 + requests * 20,
  );
});
