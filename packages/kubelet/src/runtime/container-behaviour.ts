import type { ProbeAnswer, ProbeType } from "./runtime.js";
// What a simulated container does: the node's defaults, overridden per pod (and per container)
// by `sim.reconcile.dev/` annotations.

/** Annotations `sim.reconcile.dev/<key>` (every container) and `sim.reconcile.dev/<key>.<container>` (one). */
export const simulationAnnotationPrefix = "sim.reconcile.dev/";

/** What one simulated container does. Durations in ms; `Infinity` = never. */
export interface ContainerBehaviour {
  /** Time to pull an image not yet on the node. Annotation `pull-delay`. */
  pullDelayMs: number;
  /** A pull fails with this message (ErrImagePull). Annotation `pull-error`. */
  pullError: string | undefined;
  /** Time from StartContainer until the process runs. Annotation `start-delay`. */
  startDelayMs: number;
  /** The process exits this long after it started. Annotation `exit-after`. */
  exitAfterMs: number;
  /** Its exit code. Annotation `exit-code`. */
  exitCode: number;
  /** The termination reason reported on exit; default `Completed` for 0, `Error` otherwise. Annotation `exit-reason`. */
  exitReason: string | undefined;
  /** Readiness probes fail until the container has run this long. Annotation `ready-after`. */
  readyAfterMs: number;
  /** Readiness probes fail again once the container has run this long… Annotation `unready-after`. */
  unreadyAfterMs: number;
  /** …for this long (then pass again). Annotation `unready-for`. */
  unreadyForMs: number;
  /** Startup probes fail until the container has run this long. Annotation `startup-after`. */
  startupAfterMs: number;
  /** Liveness probes fail once the container has run this long. Annotation `liveness-fail-after`. */
  livenessFailAfterMs: number;
  /**
   * On SIGTERM: `graceful` exits 0, `default` dies of the signal (143),
   * `ignore` runs on until SIGKILL at the grace period's end (137).
   * Annotation `termination`.
   */
  termination: "graceful" | "default" | "ignore";
  /** Time the process needs to exit after SIGTERM (SIGKILL still ends it at the grace period). Annotation `termination-delay`. */
  terminationDelayMs: number;
  /** Lines written to stdout at start, separated by newlines. Annotation `log`. Default: one line saying the container started. */
  log: string | undefined;
  /** A `tick <n>` line every this long while running. Annotation `log-every`. */
  logEveryMs: number;
  /** Every probe handler takes this long to answer (over `timeoutSeconds` it fails). Annotation `probe-delay`. */
  probeDelayMs: number;
  /** An HTTP GET (a lifecycle hook's) takes this long to answer. Annotation `http-delay`. */
  httpDelayMs: number;
  /** Nothing listens: HTTP GETs fail with "connection refused". Annotation `http-refused` (`true`). */
  httpRefused: boolean;
}

export const defaultContainerBehaviour: Readonly<ContainerBehaviour> = Object.freeze({
  pullDelayMs: 0,
  pullError: undefined,
  startDelayMs: 0,
  exitAfterMs: Number.POSITIVE_INFINITY,
  exitCode: 0,
  exitReason: undefined,
  readyAfterMs: 0,
  unreadyAfterMs: Number.POSITIVE_INFINITY,
  unreadyForMs: Number.POSITIVE_INFINITY,
  startupAfterMs: 0,
  livenessFailAfterMs: Number.POSITIVE_INFINITY,
  termination: "graceful",
  terminationDelayMs: 0,
  log: undefined,
  logEveryMs: Number.POSITIVE_INFINITY,
  probeDelayMs: 0,
  httpDelayMs: 0,
  httpRefused: false,
});

/**
 * The behaviour of container `container` (undefined: pod-wide keys only) of a
 * pod with `annotations`, over `defaults`. Unparseable values are ignored.
 */
export function behaviourFor(
  defaults: Readonly<ContainerBehaviour>,
  annotations: Readonly<Record<string, string>>,
  container: string | undefined,
): ContainerBehaviour {
  const behaviour = { ...defaults };
  // Most pods carry no simulation annotation: nothing to read then.
  let annotated = false;
  for (const key in annotations) {
    if (key.startsWith(simulationAnnotationPrefix)) {
      annotated = true;
      break;
    }
  }
  if (!annotated) return behaviour;
  const read = (key: string): string | undefined =>
    (container !== undefined ? annotations[`${simulationAnnotationPrefix}${key}.${container}`] : undefined) ??
    annotations[`${simulationAnnotationPrefix}${key}`];
  const duration = (key: string, field: keyof ContainerBehaviour) => {
    const value = read(key);
    if (value === undefined) return;
    const ms = parseDuration(value);
    if (ms !== undefined) (behaviour as Record<string, unknown>)[field] = ms;
  };
  duration("pull-delay", "pullDelayMs");
  duration("start-delay", "startDelayMs");
  duration("exit-after", "exitAfterMs");
  duration("ready-after", "readyAfterMs");
  duration("unready-after", "unreadyAfterMs");
  duration("unready-for", "unreadyForMs");
  duration("startup-after", "startupAfterMs");
  duration("liveness-fail-after", "livenessFailAfterMs");
  duration("termination-delay", "terminationDelayMs");
  duration("log-every", "logEveryMs");
  duration("probe-delay", "probeDelayMs");
  duration("http-delay", "httpDelayMs");
  const httpRefused = read("http-refused");
  if (httpRefused === "true" || httpRefused === "false") behaviour.httpRefused = httpRefused === "true";
  const pullError = read("pull-error");
  if (pullError !== undefined) behaviour.pullError = pullError;
  const exitCode = read("exit-code");
  if (exitCode !== undefined && /^\d{1,3}$/.test(exitCode)) behaviour.exitCode = Number(exitCode);
  const exitReason = read("exit-reason");
  if (exitReason !== undefined) behaviour.exitReason = exitReason;
  const termination = read("termination");
  if (termination === "graceful" || termination === "default" || termination === "ignore")
    behaviour.termination = termination;
  const log = read("log");
  if (log !== undefined) behaviour.log = log;
  return behaviour;
}

/** Go-style durations (`500ms`, `2s`, `1m30s`, `1h`), or `never`. */
export function parseDuration(value: string): number | undefined {
  if (value === "never") return Number.POSITIVE_INFINITY;
  if (value === "0") return 0;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const pattern = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (const match of value.matchAll(pattern)) {
    total += Number(match[1]) * units[match[2] as string]!;
    consumed += match[0].length;
  }
  return consumed === value.length && consumed > 0 ? total : undefined;
}

/** What a probe of a container that has run `ranMs` answers, by its behaviour. */
export function probeAnswer(
  behaviour: Readonly<ContainerBehaviour>,
  ranMs: number,
  type: ProbeType,
): ProbeAnswer {
  switch (type) {
    case "readiness": {
      const unready =
        ranMs >= behaviour.unreadyAfterMs && ranMs - behaviour.unreadyAfterMs < behaviour.unreadyForMs;
      return ranMs >= behaviour.readyAfterMs && !unready
        ? { success: true, output: "" }
        : { success: false, output: "HTTP probe failed with statuscode: 503" };
    }
    case "startup":
      return ranMs >= behaviour.startupAfterMs
        ? { success: true, output: "" }
        : { success: false, output: "HTTP probe failed with statuscode: 503" };
    case "liveness":
      return ranMs < behaviour.livenessFailAfterMs
        ? { success: true, output: "" }
        : { success: false, output: "HTTP probe failed with statuscode: 500" };
  }
}
