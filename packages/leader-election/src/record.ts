import { type Lease, rfc3339Micro } from "@reconcile/api";

type LeaseSpec = NonNullable<Lease["spec"]>;

/**
 * The election state kept in the lock: client-go's `LeaderElectionRecord`.
 * Times are RFC 3339 strings with microseconds (Kubernetes `MicroTime`), as
 * they travel in the Lease. Electors never compare them with their own clock;
 * they only notice that the record changed.
 */
export interface LeaderElectionRecord {
  /** Who holds the lease; "" means nobody (released), and anyone may take it at once. */
  holderIdentity: string;
  /** How long others wait, after last seeing the record change, before they may take over. */
  leaseDurationSeconds: number;
  /** When the current holder acquired the lease. */
  acquireTime?: string;
  /** When the current holder last renewed the lease. */
  renewTime?: string;
  /** How many times the holder has changed. */
  leaderTransitions: number;
}

/** Reads a Lease spec as a record (absent fields become "" / 0 / unset), as client-go's `LeaseSpecToLeaderElectionRecord`. */
export function leaseSpecToLeaderElectionRecord(spec: LeaseSpec | undefined): LeaderElectionRecord {
  const record: LeaderElectionRecord = {
    holderIdentity: spec?.holderIdentity ?? "",
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
  if (spec?.acquireTime) record.acquireTime = spec.acquireTime;
  if (spec?.renewTime) record.renewTime = spec.renewTime;
  return record;
}

/** Writes a record as a Lease spec, as client-go's `LeaderElectionRecordToLeaseSpec`. */
export function leaderElectionRecordToLeaseSpec(record: LeaderElectionRecord): LeaseSpec {
  const spec: LeaseSpec = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaderTransitions,
  };
  if (record.acquireTime) spec.acquireTime = record.acquireTime;
  if (record.renewTime) spec.renewTime = record.renewTime;
  return spec;
}

/**
 * The record's canonical JSON (fixed key order, unset fields spelled out), as
 * client-go's raw record bytes. Electors compare it to notice any change.
 */
export function rawRecord(record: LeaderElectionRecord): string {
  return JSON.stringify({
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime ?? null,
    renewTime: record.renewTime ?? null,
    leaderTransitions: record.leaderTransitions,
  });
}

/**
 * Formats a clock reading (ms since the epoch, fractions allowed) as a
 * Kubernetes `MicroTime`: `2006-01-02T15:04:05.000000Z`.
 * @deprecated Use `rfc3339Micro` from `@reconcile/api`.
 */
export const formatMicroTime: (ms: number) => string = rfc3339Micro;
