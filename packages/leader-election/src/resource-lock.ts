import type { KubeObject } from "@reconcile/api";
import type { CallOptions } from "@reconcile/client";
import type { LeaderElectionRecord } from "./record.js";

/**
 * Where a lock's events go: the one method leader election needs of an event
 * recorder (the full recorder lives in `@reconcile/controller`).
 */
export interface EventRecorder {
  event(object: KubeObject, type: "Normal" | "Warning", reason: string, message: string): void;
}

/** What `ResourceLock.get` returns: the record and its canonical JSON (for change detection). */
export interface LockRecord {
  record: LeaderElectionRecord;
  raw: string;
}

/**
 * The lock an elector competes for: client-go's `resourcelock.Interface`.
 * Every call rejects with a `StatusError` on API failures; `get` rejects with
 * NotFound when the lock object does not exist.
 */
export interface ResourceLock {
  /** Reads the record. */
  get(options?: CallOptions): Promise<LockRecord>;
  /** Creates the lock object holding `record`. */
  create(record: LeaderElectionRecord, options?: CallOptions): Promise<void>;
  /** Replaces the record; fails with Conflict if the object changed since this lock last read or wrote it. */
  update(record: LeaderElectionRecord, options?: CallOptions): Promise<void>;
  /** Records an event `"<identity> <message>"` on the lock object, if the lock has an event recorder. */
  recordEvent(message: string): void;
  /** The identity this lock competes as. */
  identity(): string;
  /** A human description of the lock, e.g. `kube-system/kube-controller-manager`. */
  describe(): string;
}
