import {
  apiVersionOf,
  type FieldSelector,
  fieldSelectorError,
  type KubeObject,
  type ListOptions,
  newBadRequest,
  newNotFound,
  type ObjectList,
  objectFieldSet,
  parseFieldSelector,
  parseSelector,
  type SelectableFields,
  type Selector,
  type Status,
  StatusError,
  type WatchEvent,
  type WatchOptions,
} from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { Storage, StorageEvent } from "../../storage/storage.js";
import { StorageError } from "../../storage/storage.js";
import {
  continueExpiredMessage,
  tooLargeResourceVersion,
  toStatusError,
} from "../../storage/storage-errors.js";
import { decodeContinue, encodeContinue } from "../continue-token.js";
import type { StoreCore } from "./context.js";
import { collectionPrefix, objectKey } from "./keys.js";

/** A running watch as the registry hands it out: wire-format events, and a way to stop. */
export interface RegistryWatch extends AsyncIterable<WatchEvent> {
  stop(): void;
}

/** GET of one object; 404 if absent. */
export async function getObject(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
): Promise<KubeObject> {
  const object = await store.context.storage.get(objectKey(store.resource, namespace, name));
  if (object === undefined) throw newNotFound(store.gr, name);
  return object;
}

/** GET of one object of a computed kind; 404 if its source has none of that name. */
export function getComputed(store: StoreCore, namespace: string | undefined, name: string): KubeObject {
  const object = store.definition.source!.list(namespace).find((item) => item.metadata?.name === name);
  if (object === undefined) throw newNotFound(store.gr, name);
  return object;
}

/** LIST of a computed kind: what its source holds now, selectors applied, in one page. */
export function listComputed(
  store: StoreCore,
  namespace: string | undefined,
  options: ListOptions,
): ObjectList {
  const predicate = predicateOf(store, options.labelSelector, options.fieldSelector);
  const all = store.definition.source!.list(namespace);
  const items = predicate === undefined ? [...all] : all.filter((item) => predicate.matches(item));
  return { apiVersion: apiVersionOf(store.resource), kind: store.resource.listKind, metadata: {}, items };
}

/** LIST with kube-apiserver's resourceVersion, resourceVersionMatch, limit and continue semantics. */
export async function listObjects(
  store: StoreCore,
  namespace: string | undefined,
  options: ListOptions,
): Promise<ObjectList> {
  const { resource, context } = store;
  const predicate = predicateOf(store, options.labelSelector, options.fieldSelector);
  const prefix = collectionPrefix(resource, namespace);
  const rv = options.resourceVersion ?? "";
  const limit = parseLimit(options.limit);
  let revision: number | undefined;
  let startKey: string | undefined;
  // As kube-apiserver's ValidateListOptions.
  if (options.resourceVersionMatch !== undefined && options.continue)
    throw newBadRequest("resourceVersionMatch is forbidden when continue is provided");
  if (options.resourceVersionMatch === "NotOlderThan" && rv === "")
    throw newBadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided");
  if (options.continue) {
    if (rv !== "" && rv !== "0")
      throw newBadRequest("specifying resource version is not allowed when using continue");
    const token = decodeContinue(options.continue);
    revision = token.revision;
    startKey = prefix + token.start;
  } else if (rv !== "" && rv !== "0") {
    const requested = parseResourceVersion(rv);
    const current = await context.storage.currentRevision();
    if (requested > current)
      throw tooLargeResourceVersion(`Too large resource version: ${requested}, current: ${current}`);
    // A limit without resourceVersionMatch also means Exact, as kube-apiserver's legacy list semantics.
    const exact =
      options.resourceVersionMatch === "Exact" ||
      (options.resourceVersionMatch === undefined && limit !== undefined);
    if (exact) revision = requested;
  } else if (options.resourceVersionMatch === "Exact") {
    throw newBadRequest(`resourceVersionMatch "Exact" requires a resourceVersion other than "" and "0"`);
  }
  let result: Awaited<ReturnType<Storage["list"]>>;
  try {
    result = await context.storage.list(prefix, { revision, startKey, limit, predicate: predicate?.matches });
  } catch (error) {
    if (options.continue && StorageError.is(error, "Expired")) {
      throw new StatusError({ code: 410, reason: "Expired", message: continueExpiredMessage });
    }
    throw toStatusError(error, store.gr, "");
  }
  const metadata: ObjectList["metadata"] = { resourceVersion: String(result.revision) };
  if (result.nextKey !== undefined) {
    metadata.continue = encodeContinue({
      revision: result.revision,
      start: result.nextKey.slice(prefix.length),
    });
    if (result.remaining !== undefined) metadata.remainingItemCount = result.remaining;
  }
  return { apiVersion: apiVersionOf(resource), kind: resource.listKind, metadata, items: result.items };
}

/** WATCH from a resourceVersion, with a timeout, bookmarks, and a stop the registry can call. */
export async function watchObjects(
  store: StoreCore,
  namespace: string | undefined,
  options: WatchOptions,
): Promise<RegistryWatch> {
  const { resource, context } = store;
  const predicate = predicateOf(store, options.labelSelector, options.fieldSelector);
  const rv = options.resourceVersion ?? "";
  const fromRevision = rv === "" || rv === "0" ? undefined : parseResourceVersion(rv);
  if (fromRevision !== undefined) {
    // A version this server has not reached (say, from before it restarted): kube-apiserver waits
    // briefly for its cache and then answers "Too large resource version"; all our writes are
    // local, so the answer is known at once, and the client relists.
    const current = await context.storage.currentRevision();
    if (fromRevision > current)
      throw tooLargeResourceVersion(`Too large resource version: ${fromRevision}, current: ${current}`);
  }
  const timeoutSeconds = options.timeoutSeconds;
  if (timeoutSeconds !== undefined && !(Number.isFinite(timeoutSeconds) && timeoutSeconds >= 0))
    throw newBadRequest(`timeoutSeconds: Invalid value: ${timeoutSeconds}: must be a non-negative number`);
  options.signal?.throwIfAborted();
  const prefix = collectionPrefix(resource, namespace);
  // A watch list: the state now (never older than the resourceVersion, checked above) as ADDED
  // events, the bookmark that ends them, then the changes after it. sendInitialEvents=false
  // starts at the newest revision even for "" or "0", with no state.
  let initial: (StorageEvent & { initialEventsEnd?: boolean })[] = [];
  let from = fromRevision;
  if (options.sendInitialEvents === true) {
    const state = await context.storage.list(prefix, { predicate: predicate?.matches });
    initial = state.items.map((object) => ({ type: "ADDED", object, revision: state.revision }));
    if (options.allowWatchBookmarks)
      initial.push({ type: "BOOKMARK", revision: state.revision, initialEventsEnd: true });
    from = state.revision;
  } else if (options.sendInitialEvents === false && fromRevision === undefined) {
    from = await context.storage.currentRevision();
  }
  const watcher = context.storage.watch(prefix, {
    fromRevision: from,
    predicate: predicate?.matches,
    bookmarkIntervalMs: options.allowWatchBookmarks ? context.bookmarkIntervalMs : undefined,
  });
  const { clock, watches } = context;
  const signal = options.signal;
  let timer: ReturnType<Clock["setTimeout"]> | undefined;
  let stopped = false;
  // Ends the watch and releases everything it holds: the timeout timer, the abort listener.
  const stop = () => {
    if (stopped) return;
    stopped = true;
    watcher.stop();
    if (timer !== undefined) clock.clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
    watches.delete(stop);
  };
  watches.add(stop);
  // setTimeout holds at most 2^31-1 ms (about 24.8 days) and fires a longer delay at once.
  if (timeoutSeconds) timer = clock.setTimeout(stop, Math.min(timeoutSeconds * 1000, 2_147_483_647));
  signal?.addEventListener("abort", stop, { once: true });
  const bookmarkOf = (revision: number, initialEventsEnd?: boolean): KubeObject => ({
    apiVersion: apiVersionOf(resource),
    kind: resource.kind,
    metadata: {
      resourceVersion: String(revision),
      ...(initialEventsEnd ? { annotations: { [initialEventsEndAnnotation]: "true" } } : {}),
    },
  });
  const gr = store.gr;
  const iterator = watcher[Symbol.asyncIterator]();
  // A plain mapping iterator (no async generator): fan-out pays this per event per watcher.
  let replayed = 0;
  const events: AsyncIterator<WatchEvent> & RegistryWatch = {
    next: () => {
      if (replayed < initial.length && !stopped) {
        return Promise.resolve({ done: false, value: toWatchEvent(initial[replayed++]!, gr, bookmarkOf) });
      }
      return iterator.next().then((next): IteratorResult<WatchEvent> => {
        if (next.done) {
          stop();
          return { done: true, value: undefined };
        }
        return { done: false, value: toWatchEvent(next.value, gr, bookmarkOf) };
      });
    },
    return: () => {
      stop();
      return Promise.resolve({ done: true, value: undefined });
    },
    [Symbol.asyncIterator]: () => events,
    stop,
  };
  return events;
}

function predicateOf(
  store: StoreCore,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): { matches: (object: KubeObject) => boolean } | undefined {
  const resource = store.resource;
  let labels: Selector | undefined;
  let fields: FieldSelector | undefined;
  try {
    if (labelSelector) labels = parseSelector(labelSelector);
    if (fieldSelector) fields = parseFieldSelector(fieldSelector);
  } catch (error) {
    throw newBadRequest((error as Error).message);
  }
  const selectable = store.definition.selectableFields;
  if (fields !== undefined) {
    const problem = fieldSelectorError(resource, fields, selectable);
    if (problem) throw problem;
  }
  if (labels?.empty()) labels = undefined;
  if (fields?.empty()) fields = undefined;
  if (labels === undefined && fields === undefined) return undefined;
  return {
    matches: (object) =>
      (labels === undefined || labels.matches(object.metadata?.labels)) &&
      (fields === undefined || fields.matches(fieldSetOf(resource, object, selectable))),
  };
}

/**
 * The selectable fields of an object, remembered for the last two objects: a
 * change is matched by every watcher of its kind in turn, each looking at its
 * new and its previous state, so without this a hundred watchers with field
 * selectors (kubelets watching `spec.nodeName`) would build two hundred field
 * sets per change. Stored objects never change, so their identity is the key.
 */
function fieldSetOf(
  resource: StoreCore["resource"],
  object: KubeObject,
  selectable: SelectableFields | undefined,
): Record<string, string> {
  if (recentFieldSets[0].object === object) return recentFieldSets[0].fields;
  if (recentFieldSets[1].object === object) return recentFieldSets[1].fields;
  const fields = objectFieldSet(resource, object, selectable);
  recentFieldSets[1] = recentFieldSets[0];
  recentFieldSets[0] = { object, fields };
  return fields;
}

const recentFieldSets: [FieldSetEntry, FieldSetEntry] = [
  { object: undefined, fields: {} },
  { object: undefined, fields: {} },
];

interface FieldSetEntry {
  object: KubeObject | undefined;
  fields: Record<string, string>;
}

/** The annotation of the bookmark that ends a watch list's initial events. */
export const initialEventsEndAnnotation = "k8s.io/initial-events-end";

function toWatchEvent(
  event: StorageEvent & { initialEventsEnd?: boolean },
  gr: { group: string; resource: string },
  bookmarkOf: (revision: number, initialEventsEnd?: boolean) => KubeObject,
): WatchEvent {
  switch (event.type) {
    case "BOOKMARK":
      return { type: "BOOKMARK", object: bookmarkOf(event.revision, event.initialEventsEnd) };
    case "ERROR": {
      const status: Status = toStatusError(event.error, gr, "").status;
      return { type: "ERROR", object: status };
    }
    default:
      return { type: event.type, object: event.object! };
  }
}

function parseResourceVersion(rv: string): number {
  if (!/^[0-9]+$/.test(rv) || !Number.isSafeInteger(Number(rv)))
    throw newBadRequest(
      `resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be a non-negative integer`,
    );
  return Number(rv);
}

function parseLimit(limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!Number.isInteger(limit) || limit < 0)
    throw newBadRequest(`limit: Invalid value: ${limit}: must be a non-negative integer`);
  return limit === 0 ? undefined : limit;
}
