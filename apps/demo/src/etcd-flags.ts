// `serve --etcd <endpoints>` keeps the cluster in an existing etcd; `serve --etcd-data-dir DIR`
// starts a local etcd over DIR. Either way the cluster survives restarts of the demo.
import type { Storage } from "@reconcile/apiserver";
import { CachedStorage, type EtcdCluster, EtcdStorage, startEtcd } from "@reconcile/storage-etcd";

export interface EtcdChoice {
  /** Undefined: the default in-memory storage. */
  storage: Storage | undefined;
  /** One line saying where the cluster lives. */
  description: string;
  /** Stops the local etcd, if one was started (after the API server has closed). */
  stop(): Promise<void>;
}

/** Reads `--etcd` / `--etcd-data-dir` from `args`; a string is a usage error. */
export async function etcdFromArgs(args: readonly string[]): Promise<EtcdChoice | string> {
  let endpoints: string | undefined;
  let dataDir: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag !== "--etcd" && flag !== "--etcd-data-dir")
      return `unknown option ${flag}; serve takes --etcd <endpoints> or --etcd-data-dir <dir>`;
    const value = inline ?? args[++i];
    if (value === undefined || value === "") return `${flag} needs a value`;
    if (flag === "--etcd") endpoints = value;
    else dataDir = value;
  }
  if (endpoints !== undefined && dataDir !== undefined) return "choose one of --etcd and --etcd-data-dir";
  if (endpoints === undefined && dataDir === undefined)
    return { storage: undefined, description: "Objects are kept in memory.", stop: async () => {} };
  let local: EtcdCluster | undefined;
  if (dataDir !== undefined) {
    try {
      // Bounded memory: the raft log is dropped after 10,000 entries (etcd 3.6's default; 3.4 keeps
      // 100,000, each a whole object), and the store is capped at 2 GiB. The API server compacts
      // old revisions every 5 minutes, as kube-apiserver does.
      local = await startEtcd({ dataDir, snapshotCount: 10_000, quotaBackendBytes: 2 * 1024 ** 3 });
    } catch (error) {
      return `could not start etcd over ${dataDir}: ${(error as Error).message}`;
    }
    endpoints = local.endpoints.join(",");
  }
  const etcd = new EtcdStorage({ endpoints: endpoints! });
  try {
    await etcd.currentRevision();
  } catch (error) {
    etcd.close();
    await local?.stop();
    return `etcd at ${endpoints} does not answer: ${(error as Error).message}`;
  }
  return {
    storage: new CachedStorage({ storage: etcd }),
    description:
      local === undefined
        ? `Objects are kept in etcd at ${endpoints}.`
        : `Objects are kept in a local etcd (${endpoints}) over ${dataDir}.`,
    stop: async () => {
      await local?.stop();
    },
  };
}
