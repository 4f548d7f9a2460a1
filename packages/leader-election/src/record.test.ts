import { describe, expect, it } from "vitest";
import {
  formatMicroTime,
  type LeaderElectionRecord,
  leaderElectionRecordToLeaseSpec,
  leaseSpecToLeaderElectionRecord,
  rawRecord,
} from "./record.js";

describe("LeaderElectionRecord and the Lease spec", () => {
  it("round-trips a full spec through the record unchanged", () => {
    const spec = {
      holderIdentity: "foo",
      leaseDurationSeconds: 10,
      acquireTime: "2026-11-22T18:00:00.123456Z",
      renewTime: "2026-11-22T18:00:05.000001Z",
      leaseTransitions: 1,
    };
    const record = leaseSpecToLeaderElectionRecord(spec);
    expect(record).toEqual({
      holderIdentity: "foo",
      leaseDurationSeconds: 10,
      acquireTime: "2026-11-22T18:00:00.123456Z",
      renewTime: "2026-11-22T18:00:05.000001Z",
      leaderTransitions: 1,
    });
    expect(leaderElectionRecordToLeaseSpec(record)).toEqual(spec);
    expect(leaseSpecToLeaderElectionRecord(leaderElectionRecordToLeaseSpec(record))).toEqual(record);
  });

  it("reads a missing spec as an unheld record with zero duration and transitions", () => {
    expect(leaseSpecToLeaderElectionRecord(undefined)).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 0,
      leaderTransitions: 0,
    });
  });

  it("writes holderIdentity, leaseDurationSeconds and leaseTransitions even when empty, times only when set", () => {
    const record: LeaderElectionRecord = {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      leaderTransitions: 3,
    };
    expect(leaderElectionRecordToLeaseSpec(record)).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      leaseTransitions: 3,
    });
  });

  it("gives the raw record a fixed key order and spells out unset times", () => {
    expect(rawRecord({ leaderTransitions: 2, leaseDurationSeconds: 15, holderIdentity: "a" })).toBe(
      '{"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":null,"renewTime":null,"leaderTransitions":2}',
    );
  });

  it("distinguishes records that differ only in the microseconds of renewTime", () => {
    const base = { holderIdentity: "a", leaseDurationSeconds: 15, leaderTransitions: 0 };
    expect(rawRecord({ ...base, renewTime: formatMicroTime(1000.001) })).not.toBe(
      rawRecord({ ...base, renewTime: formatMicroTime(1000.002) }),
    );
  });
});

describe("formatMicroTime", () => {
  it.each([
    [0, "1970-01-01T00:00:00.000000Z"],
    [Date.UTC(2026, 10, 22, 18, 11, 13, 123), "2026-11-22T18:11:13.123000Z"],
    [1.5, "1970-01-01T00:00:00.001500Z"],
    [2.0004, "1970-01-01T00:00:00.002000Z"],
  ])("formats %s ms as %s", (ms, text) => {
    expect(formatMicroTime(ms)).toBe(text);
  });
});
