import {
  type ControlleeExpectations,
  ControllerExpectations,
  type ControllerExpectationsInterface,
  type ControllerExpectationsOptions,
  type OutstandingExpectations,
} from "./controller-expectations.js";

export interface UIDTrackingControllerExpectationsOptions extends ControllerExpectationsOptions {
  /**
   * The counters to wrap. Default: a new {@link ControllerExpectations} built
   * with `clock` and `ttlMs` (which are ignored when this is given).
   */
  expectations?: ControllerExpectationsInterface | undefined;
}

/**
 * {@link ControllerExpectations} that remember which pods a controller is
 * waiting to see deleted (kube-controller-manager's
 * `UIDTrackingControllerExpectations`). A graceful delete shows up twice, first
 * as an update that sets `deletionTimestamp` and later as the delete itself;
 * each expected pod key (`namespace/name`) is counted once, whichever arrives
 * first, and keys that were never expected are ignored.
 *
 * Creations are not tracked by key: `expectCreations` and `creationObserved`
 * pass through, as upstream.
 */
export class UIDTrackingControllerExpectations {
  readonly #inner: ControllerExpectationsInterface;
  readonly #deleteKeys = new Map<string, Set<string>>();

  constructor(options: UIDTrackingControllerExpectationsOptions = {}) {
    this.#inner = options.expectations ?? new ControllerExpectations(options);
  }

  /** The inner records not yet fulfilled, each with the pod keys whose deletion it waits for. */
  outstanding(): OutstandingExpectations[] {
    return (this.#inner.outstanding?.() ?? []).map((record) => {
      const deleting = this.#deleteKeys.get(record.key);
      return deleting === undefined || deleting.size === 0
        ? record
        : { ...record, deleting: [...deleting].sort() };
    });
  }

  /**
   * Expects the deletion of exactly these pod keys (duplicates count once),
   * replacing any keys and counts still expected for `controllerKey`.
   */
  expectDeletions(controllerKey: string, deletedKeys: readonly string[]): void {
    if (!Array.isArray(deletedKeys)) {
      throw new TypeError("expectDeletions takes the list of pod keys expected to be deleted");
    }
    const keys = new Set(deletedKeys);
    this.#deleteKeys.set(controllerKey, keys);
    this.#inner.expectDeletions(controllerKey, keys.size);
  }

  /**
   * The pod `deleteKey` was seen going away (a `deletionTimestamp` update or
   * the delete). Counts only if the key is still expected, then forgets it.
   */
  deletionObserved(controllerKey: string, deleteKey: string): void {
    const keys = this.#deleteKeys.get(controllerKey);
    if (keys?.delete(deleteKey)) this.#inner.deletionObserved(controllerKey);
  }

  /** The pod keys still expected to be deleted, or undefined if none were set. */
  getUIDs(controllerKey: string): ReadonlySet<string> | undefined {
    return this.#deleteKeys.get(controllerKey);
  }

  /** Forgets both the counts and the expected keys. */
  deleteExpectations(controllerKey: string): void {
    this.#deleteKeys.delete(controllerKey);
    this.#inner.deleteExpectations(controllerKey);
  }

  getExpectations(controllerKey: string): ControlleeExpectations | undefined {
    return this.#inner.getExpectations(controllerKey);
  }

  satisfiedExpectations(controllerKey: string): boolean {
    return this.#inner.satisfiedExpectations(controllerKey);
  }

  setExpectations(controllerKey: string, add: number, del: number): void {
    this.#inner.setExpectations(controllerKey, add, del);
  }

  expectCreations(controllerKey: string, adds: number): void {
    this.#inner.expectCreations(controllerKey, adds);
  }

  creationObserved(controllerKey: string): void {
    this.#inner.creationObserved(controllerKey);
  }

  raiseExpectations(controllerKey: string, add: number, del: number): void {
    this.#inner.raiseExpectations(controllerKey, add, del);
  }

  lowerExpectations(controllerKey: string, add: number, del: number): void {
    this.#inner.lowerExpectations(controllerKey, add, del);
  }
}
