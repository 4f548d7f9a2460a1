/**
 * One `abort` listener per signal, however many requests, watches or sleeps
 * wait on it: a program passes one signal to all of them (an informer
 * factory's stop signal, a Manager's, a cluster's). A listener each would
 * trip Node's MaxListenersExceededWarning at eleven, as if it leaked, and
 * Node's `addEventListener`/`removeEventListener` walk every listener the
 * signal has, so each wait would cost as much as all the others.
 */
const subscribers = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `listener` once when `signal` aborts; the function returned unsubscribes (idempotent). */
export function listenAbort(signal: AbortSignal | undefined, listener: () => void): () => void {
  if (signal === undefined) return () => {};
  let set = subscribers.get(signal);
  if (set === undefined) {
    const created = new Set<() => void>();
    set = created;
    subscribers.set(signal, created);
    signal.addEventListener(
      "abort",
      () => {
        subscribers.delete(signal);
        for (const subscriber of [...created]) subscriber();
      },
      { once: true },
    );
  }
  const entry = () => listener();
  set.add(entry);
  const own = set;
  return () => {
    own.delete(entry);
  };
}
