import type { RequestDigest } from "./classify.js";

// What a request is expected to cost its priority level (k8s.io/apiserver's
// util/flowcontrol/request): seats while it executes, and for a write the
// seats its watch events hold for a while after it (`finalSeats` for
// `additionalLatencyMs`). A list costs a seat per 100 objects it is expected
// to read; a write a seat per 10 watches that will hear of it.

/** Seats, and work in seat-seconds as upstream's fixed point (`SeatSeconds`, 1e-8 seat-seconds per unit). */
export interface WorkEstimate {
  readonly initialSeats: number;
  readonly finalSeats: number;
  /** How long the final seats stay taken after the request is answered. */
  readonly additionalLatencyMs: number;
}

/** The estimate of every request that asks nothing wider. */
export const oneSeat: WorkEstimate = { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 };

/** The seats a request holds from its start until its final seats are released. */
export function maxSeatsOf(work: WorkEstimate): number {
  return Math.max(work.initialSeats, work.finalSeats);
}

/** Units of `SeatSeconds` per seat-second. */
export const seatSecondsScale = 1e8;

/** Upstream's `SeatsTimesDuration`: `seats` held for `ms`, in SeatSeconds units (rounded). */
export function seatsTimesMs(seats: number, ms: number): number {
  return Math.round(seats * ms * 1e5);
}

/** Upstream's `SeatSeconds.DurationPerSeat`: how long `units` of work hold `seats`, in ms (whole nanoseconds). */
function msPerSeat(units: number, seats: number): number {
  return Math.trunc((units / seats) * 10) / 1e6;
}

/** The work estimator's configuration (upstream's `DefaultWorkEstimatorConfig`). */
export const workEstimatorConfig = {
  minimumSeats: 1,
  maximumSeatsLimit: 10,
  objectsPerSeat: 100,
  watchesPerSeat: 10,
  eventAdditionalDurationMs: 5,
} as const;

/** How many objects of a resource are stored: a count, or why there is none (upstream's object count tracker). */
export type ObjectCount = number | "not-found" | "stale";

export interface WorkEstimatorSources {
  /** The stored objects of `groupResource` (`pods`, `deployments.apps`). */
  objectCount(groupResource: string): ObjectCount;
  /** The watches that will hear of a write like `digest`. */
  watchCount(digest: RequestDigest): number;
  /** The most seats one request of the level may take (0: the configured limit). */
  maxSeats(priorityLevel: string): number;
}

/** The request's work, by its verb (upstream's `workEstimator.estimate`). */
export function estimateWork(
  digest: RequestDigest | undefined,
  query: URLSearchParams,
  priorityLevel: string,
  sources: WorkEstimatorSources,
): WorkEstimate {
  const config = workEstimatorConfig;
  if (digest === undefined) return seats(config.maximumSeatsLimit);
  if (!digest.resourceRequest) return seats(config.minimumSeats);
  switch (digest.verb) {
    case "list":
    // The WatchList feature is on (1.32's default): a watch may begin with a list.
    case "watch":
      return estimateList(digest, query, priorityLevel, sources);
    case "create":
    case "update":
    case "patch":
    case "delete":
      return estimateMutation(digest, priorityLevel, sources);
    default:
      return seats(config.minimumSeats);
  }
}

function seats(initialSeats: number): WorkEstimate {
  return initialSeats === 1 ? oneSeat : { initialSeats, finalSeats: 0, additionalLatencyMs: 0 };
}

function levelMaxSeats(priorityLevel: string, sources: WorkEstimatorSources): number {
  const max = sources.maxSeats(priorityLevel);
  return max === 0 || max > workEstimatorConfig.maximumSeatsLimit
    ? workEstimatorConfig.maximumSeatsLimit
    : max;
}

/** The list options a list's cost depends on; undefined when they do not convert (Go's ParseInt of `limit`). */
interface CostOptions {
  limit: number;
  resourceVersion: string;
  resourceVersionMatch: string;
  continue: string;
  selected: boolean;
  sendInitialEvents: boolean | undefined;
}

const int64Text = /^[+-]?\d+$/;

function costOptions(query: URLSearchParams): CostOptions | undefined {
  let limit = 0;
  for (const name of ["limit", "timeoutSeconds"]) {
    const text = query.get(name);
    if (text === null) continue;
    if (!int64Text.test(text)) return undefined;
    const value = BigInt(text);
    if (value > 9223372036854775807n || value < -9223372036854775808n) return undefined;
    if (name === "limit") limit = Number(value);
  }
  const send = query.get("sendInitialEvents");
  return {
    limit,
    resourceVersion: query.get("resourceVersion") ?? "",
    resourceVersionMatch: query.get("resourceVersionMatch") ?? "",
    continue: query.get("continue") ?? "",
    selected: (query.get("fieldSelector") ?? "") !== "" || (query.get("labelSelector") ?? "") !== "",
    sendInitialEvents: send === null ? undefined : !(send === "0" || send.toLowerCase() === "false"),
  };
}

/**
 * Upstream's `shouldListFromStorage`: a consistent read (no resourceVersion)
 * goes to storage, as kube-apiserver's does on an etcd that cannot be asked
 * for progress notifications (3.4 before 3.4.31, the one Debian ships); so do
 * a continuation and a resourceVersion match the watch cache cannot serve.
 */
function listsFromStorage(options: CostOptions): boolean {
  const { resourceVersion, resourceVersionMatch: match } = options;
  const legacyExactMatch =
    options.limit > 0 && match === "" && resourceVersion !== "" && resourceVersion !== "0";
  const unsupportedMatch = (match !== "" && match !== "NotOlderThan") || legacyExactMatch;
  return resourceVersion === "" || options.continue !== "" || unsupportedMatch;
}

/** Upstream's `listWorkEstimator`: a seat per 100 objects the list is expected to read. */
function estimateList(
  digest: RequestDigest & { resourceRequest: true },
  query: URLSearchParams,
  priorityLevel: string,
  sources: WorkEstimatorSources,
): WorkEstimate {
  const { minimumSeats, objectsPerSeat } = workEstimatorConfig;
  const maxSeats = levelMaxSeats(priorityLevel, sources);
  // A list of one name is a get in storage.
  if (digest.name !== "") return seats(minimumSeats);
  const options = costOptions(query);
  // Bound to fail validation: as dear as a list may be.
  if (options === undefined) return seats(maxSeats);
  if (digest.verb === "watch" && options.sendInitialEvents !== true) return seats(minimumSeats);
  const fromCache = digest.verb === "watch" || !listsFromStorage(options);
  let stored: ObjectCount;
  try {
    stored = sources.objectCount(
      digest.apiGroup === "" ? digest.resource : `${digest.resource}.${digest.apiGroup}`,
    );
  } catch {
    return seats(maxSeats);
  }
  // A stale count means something is wrong: assume the worst. No count (an aggregated API's
  // resource, served elsewhere): assume the least.
  if (stored === "stale") return seats(maxSeats);
  if (stored === "not-found") return seats(minimumSeats);
  const limit = options.limit > 0 && options.limit < stored ? options.limit : stored;
  const read = fromCache ? stored : options.selected ? stored + limit : 2 * limit;
  return seats(Math.min(maxSeats, Math.max(minimumSeats, Math.ceil(read / objectsPerSeat))));
}

/**
 * Upstream's `mutatingWorkEstimator`: one seat while the write executes, then
 * a seat per 10 watches that hear of it for 5 ms each, reshaped to at most the
 * level's max seats held longer.
 */
function estimateMutation(
  digest: RequestDigest & { resourceRequest: true },
  priorityLevel: string,
  sources: WorkEstimatorSources,
): WorkEstimate {
  const { minimumSeats, watchesPerSeat, eventAdditionalDurationMs } = workEstimatorConfig;
  const maxSeats = levelMaxSeats(priorityLevel, sources);
  // A service account token is made without a stored write: no watch hears of it.
  if (digest.resource === "serviceaccounts" && digest.subresource === "token") return seats(minimumSeats);
  const watches = sources.watchCount(digest);
  if (watches < watchesPerSeat) return oneSeat;
  const finalSeats = Math.ceil(watches / watchesPerSeat);
  const finalWork = seatsTimesMs(finalSeats, eventAdditionalDurationMs);
  const held = Math.min(finalSeats, maxSeats);
  return { initialSeats: 1, finalSeats: held, additionalLatencyMs: msPerSeat(finalWork, held) };
}

/** What a watch is of, as upstream's watch tracker keys it. */
function watchKey(apiGroup: string, resource: string, namespace: string, name: string): string {
  return `${apiGroup}\u0000${resource}\u0000${namespace}\u0000${name}`;
}

/**
 * The watches the server is serving, counted by what they watch (upstream's
 * `watchTracker`), so a write's estimate knows how many will hear of it. A
 * watch of pods on one node (`spec.nodeName=…`, each kubelet's) is not
 * counted: a pod's write reaches one such watch, not all.
 */
export class WatchTracker {
  readonly #counts = new Map<string, number>();

  /** Counts the watch `digest` describes until the function returned is called; undefined for a non-watch. */
  register(digest: RequestDigest): (() => void) | undefined {
    if (!digest.resourceRequest || digest.verb !== "watch") return undefined;
    if (digest.resource === "pods") {
      const node = digest.fieldSelector?.find((r) => r.field === "spec.nodeName" && r.operator !== "!=");
      if (node !== undefined && node.value !== "") return () => {};
    }
    const key = watchKey(digest.apiGroup, digest.resource, digest.namespace, digest.name);
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    let forgotten = false;
    return () => {
      if (forgotten) return;
      forgotten = true;
      const left = (this.#counts.get(key) ?? 1) - 1;
      if (left === 0) this.#counts.delete(key);
      else this.#counts.set(key, left);
    };
  }

  /** The watches a write like `digest` is heard by: of the whole resource, its namespace, and its name. */
  interestedCount(digest: RequestDigest): number {
    if (!digest.resourceRequest || readOnlyVerbs.has(digest.verb)) return 0;
    const { apiGroup, resource, namespace, name } = digest;
    let count = this.#counts.get(watchKey(apiGroup, resource, "", "")) ?? 0;
    if (namespace !== "") count += this.#counts.get(watchKey(apiGroup, resource, namespace, "")) ?? 0;
    if (name !== "") count += this.#counts.get(watchKey(apiGroup, resource, namespace, name)) ?? 0;
    return count;
  }
}

const readOnlyVerbs = new Set(["get", "list", "watch", "proxy"]);
