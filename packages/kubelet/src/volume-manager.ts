// The kubelet's volume manager (`pkg/kubelet/volumemanager`) for a node
// without storage drivers: before a pod's containers start, `syncPod` waits
// (`WaitForAttachAndMount`, at most 2m3s) until every volume of the pod is
// set up under `/var/lib/kubelet/pods/<uid>/volumes/<plugin>/<name>` on the
// node's filesystem, which the runtime then bind-mounts into containers.
// A volume whose set-up fails is retried with upstream's exponential backoff
// (500 ms doubling to 2m2s), each failure a `FailedMount` Warning event
// (`MountVolume.SetUp failed for volume "<v>" : configmap "<x>" not found`);
// a volume that cannot even be processed (a claim that is missing or not
// Bound) ends the wait at once. Config map, secret, downward API and projected
// volumes are rewritten on every later sync, as the kubelet's remount does.
import { Buffer } from "node:buffer";
import {
  configMaps,
  type DeepReadonly,
  errorMessage,
  isNotFound,
  type Pod,
  persistentVolumeClaims,
  ReconcileError,
  secrets,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { EventRecorder, Logger } from "@reconcile/controller";
import type {
  ConfigMap,
  Container,
  DownwardAPIVolumeFile,
  KeyToPath,
  PersistentVolumeClaim,
  Secret,
  Volume,
} from "kubernetes-types/core/v1.js";
import { podFieldValue, resourceFieldValue } from "./downward-api.js";
import type { NodeFilesystem } from "./node-filesystem.js";
import { podRef } from "./pod-ref.js";
import type { Mount } from "./runtime/runtime.js";

export interface VolumeManagerOptions {
  /** Where config maps, secrets and claims are read. */
  client: Client;
  recorder: EventRecorder;
  filesystem: NodeFilesystem;
  clock: Clock;
  logger: Logger;
  /** The node's allocatable cpu (millicores) and memory (bytes): a downward API limit that is not set reads these. */
  allocatable: () => { milliCpu: number; memory: number };
  /** Root of the kubelet's state (`--root-dir`). Default "/var/lib/kubelet". */
  rootDir?: string | undefined;
}

/** `podAttachAndMountTimeout`. */
export const podAttachAndMountTimeoutMs = 123_000;
/** The operation executor's backoff (`exponentialbackoff`): first retry after 500 ms, doubling, at most 2m2s. */
const initialRetryMs = 500;
const maxRetryMs = 122_000;

const volumeMountMarker = Symbol.for("reconcile.kubelet.volume-mount-failed");

/** A volume the pod workers' sync could not get mounted: the kubelet reports it as `FailedMount`. `code` is `"kubelet.volume-mount-failed"`. */
export class VolumeMountError extends ReconcileError<"kubelet.volume-mount-failed"> {
  readonly [volumeMountMarker] = true;
  constructor(message: string) {
    super("kubelet.volume-mount-failed", message);
    this.name = "VolumeMountError";
  }

  static override isInstance(error: unknown): error is VolumeMountError {
    return ReconcileError.hasMarker(error, volumeMountMarker);
  }
}

interface VolumeState {
  readonly name: string;
  mounted: boolean;
  hostPath: string;
  retryMs: number;
  nextAttemptAt: number;
}

interface PodVolumes {
  readonly volumes: Map<string, VolumeState>;
}

/** A volume the populator could not process (upstream's pod errors): it fails the wait at once. */
class ProcessingError extends Error {}

/** See the file comment. */
export class VolumeManager {
  readonly #options: VolumeManagerOptions;
  readonly #rootDir: string;
  readonly #pods = new Map<string, PodVolumes>();

  constructor(options: VolumeManagerOptions) {
    this.#options = options;
    this.#rootDir = options.rootDir ?? "/var/lib/kubelet";
  }

  /**
   * Sets up every volume of the pod and resolves once all are mounted
   * (`WaitForAttachAndMount`); rejects with a {@link VolumeMountError} after
   * 2m3s, or at once when a volume cannot be processed, or when `signal` aborts.
   */
  async waitForAttachAndMount(pod: DeepReadonly<Pod>, signal: AbortSignal): Promise<void> {
    const volumes = pod.spec?.volumes ?? [];
    const uid = pod.metadata?.uid ?? "";
    if (volumes.length === 0) return;
    const { clock } = this.#options;
    const state = this.#stateOf(uid, volumes);
    const deadline = clock.now() + podAttachAndMountTimeoutMs;
    for (const volume of volumes) {
      const entry = state.volumes.get(volume.name);
      // Remount: what a config map, secret or the pod's metadata holds now.
      if (entry?.mounted && refreshable(volume)) {
        await this.#setUp(pod, volume, entry).catch((error: unknown) => {
          if (!(error instanceof ProcessingError)) this.#failedMount(pod, volume.name, error);
        });
      }
    }
    while (true) {
      const processErrors: { name: string; message: string }[] = [];
      for (const volume of volumes) {
        const entry = state.volumes.get(volume.name) as VolumeState;
        if (entry.mounted || clock.now() < entry.nextAttemptAt) continue;
        try {
          await this.#setUp(pod, volume, entry);
          entry.mounted = true;
          entry.retryMs = 0;
        } catch (error) {
          if (error instanceof ProcessingError) {
            processErrors.push({ name: volume.name, message: error.message });
            continue;
          }
          this.#failedMount(pod, volume.name, error);
          entry.retryMs = entry.retryMs === 0 ? initialRetryMs : Math.min(entry.retryMs * 2, maxRetryMs);
          entry.nextAttemptAt = clock.now() + entry.retryMs;
        }
      }
      if (signal.aborted) throw signal.reason;
      const unmounted = volumes.filter((v) => !state.volumes.get(v.name)?.mounted).map((v) => v.name);
      if (unmounted.length === 0) return;
      const failed = processErrors.map((e) => e.name);
      if (processErrors.length > 0 || clock.now() >= deadline) {
        const cause =
          processErrors.length > 0
            ? processErrors.map((e) => e.message).join("; ")
            : "context deadline exceeded";
        throw new VolumeMountError(
          `unmounted volumes=[${unmounted.join(" ")}], unattached volumes=[], failed to process volumes=[${failed.join(" ")}]: ${cause}`,
        );
      }
      let wakeAt = deadline;
      for (const name of unmounted)
        wakeAt = Math.min(wakeAt, state.volumes.get(name)?.nextAttemptAt ?? wakeAt);
      await clock.sleep(Math.max(0, wakeAt - clock.now()), { signal });
    }
  }

  /**
   * The bind mounts of one container (`makeMounts`): each `volumeMounts`
   * entry, from its volume's directory (and `subPath`) on the node.
   */
  mountsFor(pod: DeepReadonly<Pod>, container: DeepReadonly<Container>): Mount[] {
    if (container.volumeMounts === undefined || container.volumeMounts.length === 0) return [];
    const uid = pod.metadata?.uid ?? "";
    const state = this.#pods.get(uid);
    const mounts: Mount[] = [];
    for (const volumeMount of container.volumeMounts ?? []) {
      const volume = pod.spec?.volumes?.find((v) => v.name === volumeMount.name);
      const entry = state?.volumes.get(volumeMount.name);
      if (volume === undefined || entry === undefined) continue;
      const subPath = volumeMount.subPath ? `/${volumeMount.subPath}` : "";
      mounts.push({
        name: volumeMount.name,
        containerPath: volumeMount.mountPath,
        hostPath: `${entry.hostPath}${subPath}`,
        // Config maps, secrets, downward API and projected volumes are always read-only.
        readOnly: volumeMount.readOnly === true || refreshable(volume as DeepReadonly<Volume>),
      });
    }
    return mounts;
  }

  /** The names of the pod's volumes that are mounted. */
  mountedVolumes(uid: string): string[] {
    const state = this.#pods.get(uid);
    if (state === undefined) return [];
    return [...state.volumes.values()].filter((v) => v.mounted).map((v) => v.name);
  }

  /** Tears down the pod's volumes (its directory under the root dir; host paths and claims keep their data). */
  unmountPod(uid: string): void {
    if (!this.#pods.delete(uid)) return;
    this.#options.filesystem.remove(`${this.#rootDir}/pods/${uid}`);
  }

  #stateOf(uid: string, volumes: readonly DeepReadonly<Volume>[]): PodVolumes {
    let state = this.#pods.get(uid);
    if (state === undefined) {
      state = { volumes: new Map() };
      this.#pods.set(uid, state);
    }
    for (const volume of volumes) {
      if (!state.volumes.has(volume.name))
        state.volumes.set(volume.name, {
          name: volume.name,
          mounted: false,
          hostPath: "",
          retryMs: 0,
          nextAttemptAt: Number.NEGATIVE_INFINITY,
        });
    }
    return state;
  }

  #failedMount(pod: DeepReadonly<Pod>, volume: string, error: unknown): void {
    this.#options.recorder.event(
      podRef(pod),
      "Warning",
      "FailedMount",
      `MountVolume.SetUp failed for volume "${volume}" : ${errorMessage(error)}`,
    );
  }

  /** `SetUp` of one volume by its plugin; writes its files and records where it lives. */
  async #setUp(pod: DeepReadonly<Pod>, volume: DeepReadonly<Volume>, entry: VolumeState): Promise<void> {
    const { filesystem } = this.#options;
    const uid = pod.metadata?.uid ?? "";
    const namespace = pod.metadata?.namespace ?? "";
    const podDir = `${this.#rootDir}/pods/${uid}/volumes`;
    const dir = (plugin: string) => `${podDir}/kubernetes.io~${plugin}/${volume.name}`;
    if (volume.configMap !== undefined) {
      const files = await this.#configMapFiles(namespace, volume.configMap);
      entry.hostPath = dir("configmap");
      filesystem.replaceDirectory(entry.hostPath, files);
    } else if (volume.secret !== undefined) {
      const files = await this.#secretFiles(namespace, volume.secret);
      entry.hostPath = dir("secret");
      filesystem.replaceDirectory(entry.hostPath, files);
    } else if (volume.downwardAPI !== undefined) {
      entry.hostPath = dir("downward-api");
      filesystem.replaceDirectory(entry.hostPath, this.#downwardFiles(pod, volume.downwardAPI.items ?? []));
    } else if (volume.projected !== undefined) {
      const files = await this.#projectedFiles(pod, volume.projected.sources ?? []);
      entry.hostPath = dir("projected");
      filesystem.replaceDirectory(entry.hostPath, files);
    } else if (volume.hostPath !== undefined) {
      checkHostPath(filesystem, volume.hostPath.path, volume.hostPath.type ?? "");
      entry.hostPath = volume.hostPath.path;
    } else if (volume.persistentVolumeClaim !== undefined || volume.ephemeral !== undefined) {
      // A generic ephemeral volume is a claim named <pod>-<volume>, made by the ephemeral volume controller.
      const claimName = volume.persistentVolumeClaim?.claimName ?? `${pod.metadata?.name}-${volume.name}`;
      const volumeName = await this.#boundVolume(namespace, claimName);
      entry.hostPath = `${this.#rootDir}/plugins/kubernetes.io/csi/pv/${volumeName}/globalmount`;
      filesystem.mkdir(entry.hostPath);
    } else {
      // emptyDir, and volume types this node has no driver for: an empty directory of the pod.
      entry.hostPath = dir(volume.emptyDir !== undefined ? "empty-dir" : "unsupported");
      filesystem.mkdir(entry.hostPath);
    }
  }

  async #configMapFiles(
    namespace: string,
    source: DeepReadonly<{ name?: string; items?: KeyToPath[]; optional?: boolean }>,
  ): Promise<Map<string, Uint8Array>> {
    let configMap: ConfigMap | undefined;
    try {
      configMap = await this.#options.client.resource(configMaps, namespace).get(source.name ?? "");
    } catch (error) {
      if (isNotFound(error) && source.optional) return new Map();
      if (isNotFound(error)) throw new Error(`configmap "${source.name}" not found`);
      throw error;
    }
    const payload = new Map<string, Uint8Array>();
    for (const [key, value] of Object.entries(configMap.data ?? {})) payload.set(key, encode(value));
    for (const [key, value] of Object.entries(configMap.binaryData ?? {}))
      payload.set(key, Buffer.from(value, "base64"));
    return project(
      payload,
      source.items,
      source.optional === true,
      "configmap references non-existent config key",
    );
  }

  async #secretFiles(
    namespace: string,
    source: DeepReadonly<{ name?: string; secretName?: string; items?: KeyToPath[]; optional?: boolean }>,
  ): Promise<Map<string, Uint8Array>> {
    const name = source.secretName ?? source.name ?? "";
    let secret: Secret | undefined;
    try {
      secret = await this.#options.client.resource(secrets, namespace).get(name);
    } catch (error) {
      if (isNotFound(error) && source.optional) return new Map();
      if (isNotFound(error)) throw new Error(`secret "${name}" not found`);
      throw error;
    }
    const payload = new Map<string, Uint8Array>();
    for (const [key, value] of Object.entries(secret.data ?? {}))
      payload.set(key, Buffer.from(value, "base64"));
    for (const [key, value] of Object.entries(secret.stringData ?? {})) payload.set(key, encode(value));
    return project(payload, source.items, source.optional === true, "references non-existent secret key");
  }

  #downwardFiles(
    pod: DeepReadonly<Pod>,
    items: readonly DeepReadonly<DownwardAPIVolumeFile>[],
  ): Map<string, Uint8Array> {
    const files = new Map<string, Uint8Array>();
    for (const item of items) {
      if (item.fieldRef !== undefined)
        files.set(item.path, encode(podFieldValue(pod, item.fieldRef.fieldPath) ?? ""));
      else if (item.resourceFieldRef !== undefined)
        files.set(
          item.path,
          encode(resourceFieldValue(pod, item.resourceFieldRef, this.#options.allocatable())),
        );
    }
    return files;
  }

  async #projectedFiles(
    pod: DeepReadonly<Pod>,
    sources: readonly DeepReadonly<NonNullable<NonNullable<Volume["projected"]>["sources"]>[number]>[],
  ): Promise<Map<string, Uint8Array>> {
    const namespace = pod.metadata?.namespace ?? "";
    const files = new Map<string, Uint8Array>();
    const errors: string[] = [];
    for (const source of sources) {
      try {
        let part: Map<string, Uint8Array> | undefined;
        if (source.configMap !== undefined) part = await this.#configMapFiles(namespace, source.configMap);
        else if (source.secret !== undefined) part = await this.#secretFiles(namespace, source.secret);
        else if (source.downwardAPI !== undefined)
          part = this.#downwardFiles(pod, source.downwardAPI.items ?? []);
        else if (source.serviceAccountToken !== undefined) {
          const token = serviceAccountToken(pod, source.serviceAccountToken, this.#options.clock.now());
          part = new Map([[source.serviceAccountToken.path, encode(token)]]);
        }
        for (const [path, data] of part ?? []) files.set(path, data);
      } catch (error) {
        errors.push(errorMessage(error));
      }
    }
    // utilerrors.NewAggregate: one error reads as itself, several as a list.
    if (errors.length === 1) throw new Error(errors[0]);
    if (errors.length > 1) throw new Error(`[${errors.join(", ")}]`);
    return files;
  }

  /** The claim must exist, not be deleting, and be Bound (the populator's `getPVCExtractPV`). */
  async #boundVolume(namespace: string, claimName: string): Promise<string> {
    const prefix = `error processing PVC ${namespace}/${claimName}`;
    let claim: PersistentVolumeClaim;
    try {
      claim = await this.#options.client.resource(persistentVolumeClaims, namespace).get(claimName);
    } catch (error) {
      throw new ProcessingError(`${prefix}: failed to fetch PVC from API server: ${errorMessage(error)}`);
    }
    if (claim.metadata?.deletionTimestamp !== undefined)
      throw new ProcessingError(`${prefix}: can't start pod because PVC is being deleted`);
    if (claim.status?.phase !== "Bound" || !claim.spec?.volumeName)
      throw new ProcessingError(`${prefix}: PVC is not bound`);
    return claim.spec.volumeName;
  }
}

/** Volumes whose contents follow API objects: rewritten on every sync, always mounted read-only. */
function refreshable(volume: DeepReadonly<Volume>): boolean {
  return (
    volume.configMap !== undefined ||
    volume.secret !== undefined ||
    volume.downwardAPI !== undefined ||
    volume.projected !== undefined
  );
}

/** `MakePayload`: every key, or only `items` (a missing key fails unless the source is optional). */
function project(
  payload: Map<string, Uint8Array>,
  items: readonly DeepReadonly<KeyToPath>[] | undefined,
  optional: boolean,
  missingKeyMessage: string,
): Map<string, Uint8Array> {
  if (items === undefined || items.length === 0) return payload;
  const files = new Map<string, Uint8Array>();
  for (const item of items) {
    const data = payload.get(item.key);
    if (data === undefined) {
      if (optional) continue;
      throw new Error(`${missingKeyMessage}: ${item.key}`);
    }
    files.set(item.path, data);
  }
  return files;
}

/**
 * A bound service account token's shape (issuer, audience, expiry, the pod
 * it is bound to), unsigned (`alg: none`): the embedded API server has no
 * TokenRequest to sign one.
 */
function serviceAccountToken(
  pod: DeepReadonly<Pod>,
  source: DeepReadonly<{ audience?: string; expirationSeconds?: number }>,
  nowMs: number,
): string {
  const issuedAt = Math.floor(nowMs / 1000);
  const account = pod.spec?.serviceAccountName ?? "default";
  const namespace = pod.metadata?.namespace ?? "";
  const claims = {
    aud: [source.audience ?? "https://kubernetes.default.svc.cluster.local"],
    exp: issuedAt + (source.expirationSeconds ?? 3600),
    iat: issuedAt,
    iss: "https://kubernetes.default.svc.cluster.local",
    "kubernetes.io": {
      namespace,
      pod: { name: pod.metadata?.name ?? "", uid: pod.metadata?.uid ?? "" },
      serviceaccount: { name: account },
    },
    nbf: issuedAt,
    sub: `system:serviceaccount:${namespace}:${account}`,
  };
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.`;
}

/** hostPath's `type` checks (`checkType`); the *OrCreate types create what is missing. */
function checkHostPath(filesystem: NodeFilesystem, path: string, type: string): void {
  switch (type) {
    case "DirectoryOrCreate":
      if (!filesystem.exists(path)) filesystem.mkdir(path);
      else if (!filesystem.isDirectory(path))
        throw new Error(`hostPath type check failed: ${path} is not a directory`);
      return;
    case "Directory":
      if (!filesystem.isDirectory(path))
        throw new Error(`hostPath type check failed: ${path} is not a directory`);
      return;
    case "FileOrCreate":
      if (!filesystem.exists(path)) filesystem.writeFile(path, "");
      else if (filesystem.isDirectory(path))
        throw new Error(`hostPath type check failed: ${path} is not a file`);
      return;
    case "File":
      if (filesystem.readFile(path) === undefined)
        throw new Error(`hostPath type check failed: ${path} is not a file`);
      return;
    default:
      // "" and the socket/device types: no check a simulated node can make.
      return;
  }
}

function encode(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
