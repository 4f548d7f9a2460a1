import type { DeepReadonly, Logger, Pod } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { KubeletOptions } from "../kubelet-options.js";
import type { PodManager } from "../pod-manager.js";
import { readStaticPodsFromURL } from "../static-pod-url.js";
import { readStaticPods } from "../static-pods.js";

/** What a static pod source needs of the kubelet. */
export interface StaticPodSourceContext {
  readonly nodeName: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where the source's pods are recorded as static. */
  readonly podManager: PodManager;
  /** Hands the changes to the sync loop as config messages. */
  readonly send: (op: "ADD" | "REMOVE", pods: readonly DeepReadonly<Pod>[]) => void;
}

/**
 * The static pod sources the kubelet's options configure (`staticPodPath`,
 * `staticPodURL`), each running until `signal` aborts.
 */
export function runStaticPodSources(
  context: StaticPodSourceContext,
  options: Pick<
    KubeletOptions,
    | "staticPodPath"
    | "staticPodCheckFrequencyMs"
    | "staticPodURL"
    | "staticPodURLHeader"
    | "httpCheckFrequencyMs"
  >,
  signal: AbortSignal,
): Promise<void>[] {
  const running: Promise<void>[] = [];
  const { staticPodPath: directory, staticPodURL: url } = options;
  if (directory !== undefined) {
    const periodMs = options.staticPodCheckFrequencyMs ?? 20_000;
    running.push(runFileSource(context, { directory, periodMs, signal }));
  }
  if (url !== undefined) {
    const periodMs = options.httpCheckFrequencyMs ?? 20_000;
    running.push(runURLSource(context, { url, headers: options.staticPodURLHeader, periodMs, signal }));
  }
  return running;
}

/**
 * The file source (upstream `pkg/kubelet/config/file.go`): the manifest
 * directory, read now and every `periodMs`; each unreadable manifest is
 * logged once.
 */
export function runFileSource(
  context: StaticPodSourceContext,
  options: { directory: string; periodMs: number; signal: AbortSignal },
): Promise<void> {
  const reported = new Set<string>();
  return runStaticPodSource(context, options, async () => {
    const { pods: found, errors } = readStaticPods(options.directory, context.nodeName);
    for (const error of errors) {
      if (reported.has(error.file)) continue;
      reported.add(error.file);
      context.logger.error(
        { node: context.nodeName, file: error.file, err: error.message },
        "could not read a static pod manifest",
      );
    }
    return found;
  });
}

/**
 * The http source (upstream `pkg/kubelet/config/http.go`): the URL, read now
 * and every `periodMs`. A failed read leaves its pods running; an empty body
 * removes them.
 */
export function runURLSource(
  context: StaticPodSourceContext,
  options: {
    url: string;
    headers: Readonly<Record<string, readonly string[]>> | undefined;
    periodMs: number;
    signal: AbortSignal;
  },
): Promise<void> {
  const { url, signal } = options;
  const { logger, nodeName } = context;
  let last: string | undefined;
  let failures = 0;
  return runStaticPodSource(context, options, async () => {
    const read = await readStaticPodsFromURL({ url, headers: options.headers, nodeName, last, signal });
    if (read.body !== undefined) last = read.body;
    if (read.kind === "unchanged") return undefined;
    if (read.kind === "pods") {
      if (failures > 0) logger.info({ node: nodeName, url }, "Successfully read pods from URL");
      failures = 0;
      return read.pods;
    }
    // As upstream: the first few failures are logged, then no more until a read succeeds.
    if (failures < 3 && !signal.aborted) {
      logger.error({ node: nodeName, url, err: read.message }, "Failed to read pods from URL");
    }
    failures++;
    return read.kind === "empty" ? [] : undefined;
  });
}

/**
 * Runs a static pod source: `read` now and every `periodMs`, each time the
 * source's whole set of pods (or undefined: no change), turned into config
 * messages (a changed manifest is a new UID: the old pod goes, the new one comes).
 */
async function runStaticPodSource(
  context: StaticPodSourceContext,
  options: { periodMs: number; signal: AbortSignal },
  read: () => Promise<Pod[] | undefined>,
): Promise<void> {
  const { signal } = options;
  /** The full names of the static pods this source runs. */
  const mine = new Set<string>();
  while (!signal.aborted) {
    const found = await read();
    if (found !== undefined && !signal.aborted) {
      const { removed, added } = context.podManager.applyStaticPods(mine, found);
      if (removed.length > 0) context.send("REMOVE", removed);
      if (added.length > 0) context.send("ADD", added);
    }
    try {
      await context.clock.sleep(options.periodMs, { signal });
    } catch {
      return;
    }
  }
}
