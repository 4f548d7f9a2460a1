// The http source of static pods (`pkg/kubelet/config/http.go`): the kubelet
// reads `staticPodURL` (`--manifest-url`) now and every 20 s, with the
// configured headers, and runs what it finds — one pod, or a PodList — as it
// runs the pods of its manifest directory.
import { errorMessage } from "@reconcile/api";
import type { Pod } from "kubernetes-types/core/v1.js";
import { applyStaticPodDefaults, checkManifest, parseManifest } from "./static-pods.js";

/** The most the source reads (upstream's `maxConfigLength`, 10 MiB). */
export const maxManifestBytes = 10 * 1024 * 1024;

/** How long one read may take (upstream's client timeout). */
export const manifestURLTimeoutMs = 10_000;

/** What a read of the URL found: the pods to run, or why there are none this time. */
export type ManifestURLRead =
  | { readonly kind: "pods"; readonly pods: Pod[] }
  /** The same bytes as the last read: nothing changes. */
  | { readonly kind: "unchanged" }
  /** Upstream sets an empty list and reports the error. */
  | { readonly kind: "empty"; readonly message: string }
  /** Nothing changes; the error is reported. */
  | { readonly kind: "error"; readonly message: string };

/** Reads static pods from a URL (`extractFromURL`). `last` is the body of the last read that was used. */
export async function readStaticPodsFromURL(options: {
  url: string;
  headers?: Readonly<Record<string, readonly string[]>> | undefined;
  nodeName: string;
  last?: string | undefined;
  signal?: AbortSignal | undefined;
}): Promise<ManifestURLRead & { body?: string }> {
  const { url, nodeName } = options;
  const timeout = AbortSignal.timeout(manifestURLTimeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  let body: string;
  try {
    const headers = new Headers();
    for (const [name, values] of Object.entries(options.headers ?? {}))
      for (const value of values) headers.append(name, value);
    const response = await fetch(url, { headers, signal });
    const bytes = await readAtMost(response, maxManifestBytes);
    if (response.status !== 200)
      return { kind: "error", message: `${url}: ${`${response.status} ${response.statusText}`.trim()}` };
    body = new TextDecoder().decode(bytes);
  } catch (error) {
    // fetch's own message is "fetch failed": what failed is its cause.
    const cause = error instanceof Error && error.cause !== undefined ? `: ${errorMessage(error.cause)}` : "";
    return { kind: "error", message: `${url}: ${errorMessage(error)}${cause}` };
  }
  if (body.length === 0) return { kind: "empty", message: `zero-length data received from ${url}`, body };
  if (body === options.last) return { kind: "unchanged" };
  return { ...decodePods(body, url, nodeName), body };
}

/** One pod, else a PodList (`tryDecodeSinglePod`, then `tryDecodePodList`). */
function decodePods(body: string, url: string, nodeName: string): ManifestURLRead {
  const failed = (single: string, multiple: string): ManifestURLRead => ({
    kind: "error",
    message: `${url}: received '${body}', but couldn't parse as single (${single}) or multiple pods (${multiple})`,
  });
  let parsed: unknown;
  try {
    parsed = parseManifest(body);
  } catch (error) {
    return failed(errorMessage(error), errorMessage(error));
  }
  const kind =
    typeof parsed === "object" && parsed !== null ? (parsed as { kind?: unknown }).kind : undefined;
  if (kind !== "Pod" && kind !== "PodList")
    return failed(
      `invalid pod: kind ${JSON.stringify(kind)}`,
      `invalid pods List: kind ${JSON.stringify(kind)}`,
    );
  const items = kind === "Pod" ? [parsed as Pod] : (parsed as { items?: unknown }).items;
  const manifests = Array.isArray(items) ? (items as Pod[]) : [];
  try {
    // It parsed: what is wrong with a pod in it is the answer.
    for (const manifest of manifests) checkManifest(manifest);
  } catch (error) {
    return { kind: "error", message: errorMessage(error) };
  }
  return {
    kind: "pods",
    pods: manifests.map((manifest) => applyStaticPodDefaults(manifest, url, nodeName, "http")),
  };
}

/** The body, or an error once it passes `limit` bytes (`utilio.ReadAtMost`). */
async function readAtMost(response: Response, limit: number): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > limit) throw new Error("the read limit is reached");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
