// Static pods (`pkg/kubelet/config/file.go`, `pkg/kubelet/pod/mirror_client.go`):
// pods the kubelet reads from a manifest directory (`staticPodPath`) and runs
// without the API server, each reported to the API server through a mirror
// pod — a copy annotated `kubernetes.io/config.mirror` and owned by the Node,
// which the kubelet re-creates if it is deleted and deletes once the static
// pod is gone.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type DeepReadonly, errorMessage } from "@reconcile/api";
import type { Pod } from "kubernetes-types/core/v1.js";
import { parseAllDocuments } from "yaml";

/** The annotation that makes a pod a mirror pod; its value is the static pod's hash (UID). */
export const configMirrorAnnotationKey = "kubernetes.io/config.mirror";
/** The static pod's hash, also its UID (`kubernetes.io/config.hash`). */
export const configHashAnnotationKey = "kubernetes.io/config.hash";
const configSourceAnnotationKey = "kubernetes.io/config.source";

/** A manifest that could not be read as a pod, with why. */
export interface ManifestError {
  readonly file: string;
  readonly message: string;
}

/**
 * Reads every pod manifest in `directory` (`extractFromDir`): one pod per file,
 * YAML or JSON, hidden files skipped, defaults applied as the file source does.
 * A missing directory is no pods.
 */
export function readStaticPods(
  directory: string,
  nodeName: string,
): { pods: Pod[]; errors: ManifestError[] } {
  const pods: Pod[] = [];
  const errors: ManifestError[] = [];
  let names: string[];
  try {
    names = readdirSync(directory).sort();
  } catch {
    return { pods, errors };
  }
  for (const name of names) {
    if (name.startsWith(".")) continue;
    const file = join(directory, name);
    try {
      if (!statSync(file).isFile()) continue;
      let parsed: unknown;
      try {
        parsed = parseManifest(readFileSync(file, "utf8"));
      } catch (error) {
        throw new Error(`couldn't parse as pod(${errorMessage(error)}), please check config file`);
      }
      if (typeof parsed !== "object" || parsed === null || (parsed as Pod).kind !== "Pod")
        throw new Error(`expected a Pod object, got kind ${JSON.stringify((parsed as Pod | null)?.kind)}`);
      const manifest = parsed as Pod;
      checkManifest(manifest);
      pods.push(applyStaticPodDefaults(manifest, file, nodeName));
    } catch (error) {
      errors.push({ file, message: errorMessage(error) });
    }
  }
  return { pods, errors };
}

/** What the API server would refuse, the static pod sources refuse too. */
export function checkManifest(manifest: Pod): void {
  if (!manifest.metadata?.name) throw new Error("metadata.name: Required value: name is required");
  if (!Array.isArray(manifest.spec?.containers) || manifest.spec.containers.length === 0)
    throw new Error("spec.containers: Required value");
}

/**
 * A manifest's first YAML document (JSON is YAML) as JSON values, read as
 * Kubernetes reads YAML (sigs.k8s.io/yaml): YAML 1.1 scalars (`yes`, `off` are
 * booleans), timestamps left as strings, `<<` merge keys, the last of two same keys.
 */
export function parseManifest(text: string): unknown {
  const [document] = parseAllDocuments(text, {
    version: "1.1",
    merge: true,
    uniqueKeys: false,
    customTags: (tags) => tags.filter((tag) => typeof tag === "string" || tag.tag !== timestampTag),
  });
  if (document === undefined) return null;
  // The YAML library's message without its excerpt of the text.
  if ("errors" in document && document.errors.length > 0)
    throw new Error(document.errors[0]!.message.split("\n")[0]!.replace(/:$/, ""));
  return document.toJS({ maxAliasCount: 100 });
}

const timestampTag = "tag:yaml.org,2002:timestamp";

/**
 * `applyDefaults` of the file and http sources: a UID hashed from the
 * manifest with the node and the file (or with the URL); the name suffixed
 * with the node's; namespace `default`; bound to this node; the hash and
 * source annotations; for a file's pod, a toleration of every NoExecute taint;
 * and the API defaults a static pod does not get from an API server (restart
 * policy, grace period, pull policy).
 */
export function applyStaticPodDefaults(
  manifest: Pod,
  /** The manifest's path, or its URL for the http source. */
  origin: string,
  nodeName: string,
  source: "file" | "http" = "file",
): Pod {
  const pod = structuredClone(manifest);
  const metadata = (pod.metadata ??= {});
  const where = source === "file" ? `host:${nodeName}file:${origin}` : `url:${origin}`;
  const uid = metadata.uid || createHash("md5").update(JSON.stringify(manifest)).update(where).digest("hex");
  (metadata as { uid?: string }).uid = uid;
  metadata.name = `${metadata.name ?? ""}-${nodeName.toLowerCase()}`;
  metadata.namespace ||= "default";
  metadata.annotations = {
    ...metadata.annotations,
    [configHashAnnotationKey]: uid,
    [configSourceAnnotationKey]: source,
  };
  const spec = (pod.spec ??= { containers: [] });
  spec.nodeName = nodeName;
  if (source === "file") {
    const tolerations = (spec.tolerations ??= []);
    if (!tolerations.some((t) => t.operator === "Exists" && t.effect === "NoExecute" && t.key === undefined))
      tolerations.push({ operator: "Exists", effect: "NoExecute" });
  }
  spec.restartPolicy ??= "Always";
  spec.terminationGracePeriodSeconds ??= 30;
  for (const container of [...spec.containers, ...(spec.initContainers ?? [])]) {
    const tag = container.image?.includes(":")
      ? container.image.slice(container.image.lastIndexOf(":") + 1)
      : "";
    container.imagePullPolicy ??= tag === "" || tag === "latest" ? "Always" : "IfNotPresent";
  }
  (pod as { status?: Pod["status"] }).status = { phase: "Pending" };
  return pod;
}

/** Whether a pod from the API server is a mirror pod. */
export function isMirrorPod(pod: DeepReadonly<Pod>): boolean {
  return pod.metadata?.annotations?.[configMirrorAnnotationKey] !== undefined;
}

/** `IsMirrorPodOf`: the mirror carries the static pod's hash, and has the same full name. */
export function isMirrorPodOf(mirror: DeepReadonly<Pod>, pod: DeepReadonly<Pod>): boolean {
  return (
    podFullName(mirror) === podFullName(pod) &&
    mirror.metadata?.annotations?.[configMirrorAnnotationKey] === pod.metadata?.uid
  );
}

/** `GetPodFullName`: `<name>_<namespace>`. */
export function podFullName(pod: DeepReadonly<Pod>): string {
  return `${pod.metadata?.name}_${pod.metadata?.namespace}`;
}

/** The mirror pod for a static pod (`CreateMirrorPod`): owned by the Node as its controller. */
export function mirrorPodOf(pod: DeepReadonly<Pod>, nodeName: string, nodeUid: string): Pod {
  const mirror = structuredClone(pod) as Pod;
  const metadata = mirror.metadata ?? {};
  mirror.metadata = {
    ...(metadata.name !== undefined ? { name: metadata.name } : {}),
    ...(metadata.namespace !== undefined ? { namespace: metadata.namespace } : {}),
    ...(metadata.labels !== undefined ? { labels: metadata.labels } : {}),
    annotations: { ...metadata.annotations, [configMirrorAnnotationKey]: metadata.uid ?? "" },
    ownerReferences: [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeUid, controller: true }],
  };
  delete (mirror as { status?: unknown }).status;
  return mirror;
}
