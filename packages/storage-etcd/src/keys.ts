import { builtinResources } from "@reconcile/api";

export interface KeyLayoutOptions {
  /** Where every object lives in etcd (kube-apiserver's `--etcd-prefix`). Default: `/registry`. */
  prefix?: string | undefined;
  /** Resources whose keys drop the API group, as kube-apiserver's built-ins do. Default: `builtinResources`. */
  resources?: readonly { group: string; plural: string }[] | undefined;
}

/**
 * Translates the storage keys the registry uses (`/<group or core>/<plural>/<namespace>/<name>`)
 * to kube-apiserver's etcd layout and back: `<prefix>/<plural>/<namespace>/<name>` for
 * built-in resources (nodes under `minions`, services under `services/specs`, as upstream),
 * `<prefix>/<group>/<plural>/…` for every other group (custom resources).
 */
export class KeyLayout {
  /** The normalised prefix: starts and ends with `/`. */
  readonly root: string;
  readonly #builtin = new Map<string, string>();
  /** The built-in group of a plural, for keys read back from etcd. */
  readonly #groupOfPlural = new Map<string, string>();

  constructor(options: KeyLayoutOptions = {}) {
    this.root = normalisePrefix(options.prefix ?? "/registry");
    for (const { group, plural } of options.resources ?? builtinResources) {
      const registryGroup = group || "core";
      this.#builtin.set(
        `${registryGroup}/${plural}`,
        legacyNames.get(`${registryGroup}/${plural}`) ?? plural,
      );
      if (!this.#groupOfPlural.has(plural)) this.#groupOfPlural.set(plural, registryGroup);
    }
  }

  /**
   * The etcd key for a storage key or key prefix, or undefined for a prefix that
   * does not name one resource (`/`, `/core/`): those span the whole root.
   */
  toEtcd(key: string): string | undefined {
    const first = key.indexOf("/", 1);
    const second = first < 0 ? -1 : key.indexOf("/", first + 1);
    if (!key.startsWith("/") || second < 0) return undefined;
    const group = key.slice(1, first);
    const plural = key.slice(first + 1, second);
    const rest = key.slice(second + 1);
    return `${this.root}${this.resourcePath(group, plural)}/${rest}`;
  }

  /** The storage key of an etcd key under the root. */
  fromEtcd(etcdKey: string): string {
    const path = etcdKey.slice(this.root.length);
    for (const [legacy, registryKey] of legacyPaths) {
      if (path.startsWith(legacy)) return `/${registryKey}/${path.slice(legacy.length)}`;
    }
    const first = path.indexOf("/");
    const segment = first < 0 ? path : path.slice(0, first);
    if (segment.includes(".")) return `/${path}`;
    return `/${this.#groupOfPlural.get(segment) ?? "core"}/${path}`;
  }

  /** Where one resource's objects live, relative to the root, without a trailing `/`. */
  resourcePath(group: string, plural: string): string {
    const builtin = this.#builtin.get(`${group}/${plural}`);
    if (builtin !== undefined) return builtin;
    return group === "core" || !group.includes(".") ? plural : `${group}/${plural}`;
  }
}

/** kube-apiserver's historical etcd paths for a few core resources. */
const legacyNames = new Map([
  ["core/nodes", "minions"],
  ["core/services", "services/specs"],
  ["core/endpoints", "services/endpoints"],
]);
const legacyPaths = [...legacyNames].map(([registry, etcd]) => [`${etcd}/`, registry] as const);

function normalisePrefix(prefix: string): string {
  let root = prefix.startsWith("/") ? prefix : `/${prefix}`;
  if (!root.endsWith("/")) root += "/";
  return root;
}

/** The first key after every key starting with `prefix` (etcd's range end for a prefix). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  // Every byte is 0xff: the range runs to the end of the keyspace.
  return Buffer.from([0]);
}
