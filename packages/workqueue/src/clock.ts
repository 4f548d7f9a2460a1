/**
 * The time source of a queue: milliseconds and one-shot timers. Declared here
 * rather than imported so that the workqueue has no dependencies at all;
 * `@reconcile/clock`'s `realClock` and `FakeClock` fit it as they are.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `callback` once, `ms` milliseconds from now, and returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a timer; unknown or already-fired handles are ignored. */
  clearTimeout(handle: unknown): void;
}

/**
 * The real clock. It looks `Date.now` and `setTimeout` up on every call, so
 * vitest's or sinon's fake timers drive it too.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, Math.max(0, ms)),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};
