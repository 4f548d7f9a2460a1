import { copyJson } from "../json.js";
import { childType, resolve, type TypeNode } from "./schema.js";
import { bothEmpty, isGranular, isObject, itemIdentity } from "./typed.js";

/**
 * Merges an applied configuration into the live object (structured-merge-diff's
 * `Merge`): scalars and atomic values are replaced, granular maps and structs
 * united, associative lists merged item by item, keeping the configuration's
 * order for the items it names. Returns a new value; neither input changes.
 */
export function merge(live: unknown, config: unknown, type: TypeNode): unknown {
  if (config === undefined) return live;
  if (live === undefined) return copyJson(config);
  const t = resolve(type, config);
  if (config === null) return isGranular(t) ? live : null;
  if (bothEmpty(live, config)) return copyJson(config);
  switch (t.kind) {
    case "struct":
    case "map": {
      if (t.atomic || !isObject(live) || !isObject(config)) return copyJson(config);
      const out: Record<string, unknown> = { ...live };
      for (const [name, value] of Object.entries(config)) {
        const merged = merge(live[name], value, childType(t, name));
        // A null decodes to an absent field in kube-apiserver's typed objects.
        if (merged === null) delete out[name];
        else out[name] = merged;
      }
      return out;
    }
    case "list": {
      if (t.listType === "atomic" || !Array.isArray(live) || !Array.isArray(config)) return copyJson(config);
      const itemType = t.listType === "map" ? t.items : { kind: "scalar" as const };
      return mergeListItems(live, config, itemIdentity(t), itemType);
    }
    default:
      return copyJson(config);
  }
}

/**
 * The order of a merged associative list, as structured-merge-diff's list merge
 * walks both lists at once: items the configuration names follow its order;
 * a live-only item stays where it was relative to the shared items around it,
 * so it is emitted as soon as the walk over the live list reaches it.
 */
function mergeListItems(
  live: unknown[],
  config: unknown[],
  identify: (item: unknown) => string,
  itemType: TypeNode,
): unknown[] {
  const liveKeys = live.map(identify);
  const configKeys = config.map(identify);
  const liveByKey = new Map<string, unknown>();
  for (const [index, key] of liveKeys.entries()) liveByKey.set(key, live[index]);
  const configByKey = new Map<string, unknown>();
  for (const [index, key] of configKeys.entries()) configByKey.set(key, config[index]);
  const shared = configKeys.filter((key) => liveByKey.has(key));
  let nextShared = 0;
  const done = new Set<string>();
  const out: unknown[] = [];
  const takeConfig = (index: number) => {
    const key = configKeys[index]!;
    done.add(key);
    out.push(merge(liveByKey.get(key), configByKey.get(key), itemType));
    if (shared[nextShared] === key) nextShared++;
  };
  let l = 0;
  let c = 0;
  while (l < live.length || c < config.length) {
    if (l < live.length && c < config.length) {
      const key = liveKeys[l]!;
      if (key === configKeys[c]) {
        takeConfig(c);
        l++;
        c++;
        continue;
      }
      // A shared item the configuration wants later: it is emitted when the configuration gets there.
      if (configByKey.has(key) && nextShared < shared.length && shared[nextShared] !== key) {
        l++;
        continue;
      }
    }
    if (l < live.length) {
      const key = liveKeys[l]!;
      if (!configByKey.has(key)) {
        out.push(live[l]);
        l++;
        continue;
      }
      if (done.has(key)) {
        l++;
        continue;
      }
    }
    if (c < config.length) {
      takeConfig(c);
      c++;
    }
  }
  return out;
}
