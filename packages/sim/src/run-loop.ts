// Captured at load, so that fake timers installed later (vi.useFakeTimers) cannot stall the loop.
const realSetImmediate = globalThis.setImmediate;

/** The most macrotask hops one settle takes before it calls the work endless. */
export const maxHopsPerSettle = 20_000;

/**
 * Runs every piece of work that is ready, without moving time: hops over
 * macrotasks (each hop drains the microtask queue) until no immediate is
 * queued. Returns false when work still queued after
 * {@link maxHopsPerSettle} hops (a loop that never yields to time).
 */
export async function settle(): Promise<boolean> {
  for (let hops = 0; hops < maxHopsPerSettle; hops++) {
    await new Promise<void>((resolve) => realSetImmediate(resolve));
    if (!process.getActiveResourcesInfo().includes("Immediate")) return true;
  }
  return false;
}
