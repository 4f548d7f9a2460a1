// Container logs as the kubelet's `/containerLogs/{ns}/{pod}/{container}`
// endpoint serves them: the container instance is chosen from the pod's
// status (current, or `previous`), with upstream's error texts for
// containers that have no logs yet, then the runtime's lines are filtered
// by since / tail / limitBytes and optionally prefixed with timestamps.
import type { DeepReadonly, Pod } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { ContainerStatus, PodStatus } from "kubernetes-types/core/v1.js";
import type { ContainerRuntime, LogLine } from "./runtime/runtime.js";

/** `PodLogOptions`, as the kubelet receives them. */
export interface ContainerLogOptions {
  follow?: boolean | undefined;
  previous?: boolean | undefined;
  timestamps?: boolean | undefined;
  tailLines?: number | undefined;
  sinceSeconds?: number | undefined;
  /** RFC 3339. */
  sinceTime?: string | undefined;
  limitBytes?: number | undefined;
}

/**
 * The log, or why not: `code` 404 for an unknown pod or container, 400 for a
 * container with no logs to give.
 */
export type ContainerLogResult =
  | {
      ok: true;
      /** The text so far, lines ending in "\n". */
      text: string;
      /**
       * With `follow` and a running container: streams later lines through
       * `write` and calls `end` once the container exits or the byte limit is
       * reached; returns a function that stops following.
       */
      follow: ((write: (chunk: string) => void, end: () => void) => () => void) | undefined;
    }
  | { ok: false; code: 400 | 404; message: string };

export function readContainerLogs(
  runtime: ContainerRuntime,
  clock: Clock,
  pod: DeepReadonly<Pod> | undefined,
  status: DeepReadonly<PodStatus> | undefined,
  podName: string,
  container: string,
  options: ContainerLogOptions,
): ContainerLogResult {
  if (pod === undefined) return { ok: false, code: 404, message: `pod "${podName}" does not exist` };
  const inSpec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].some(
    (c) => c.name === container,
  );
  if (!inSpec)
    return { ok: false, code: 404, message: `container "${container}" not found in pod "${podName}"` };
  const containerStatus = [
    ...(status?.containerStatuses ?? []),
    ...(status?.initContainerStatuses ?? []),
  ].find((s) => s.name === container);
  const chosen = containerIdFor(containerStatus, podName, container, options.previous === true);
  if ("error" in chosen) return { ok: false, code: 400, message: chosen.error };
  const id = chosen.id.slice(chosen.id.indexOf("://") + 3);
  const record = runtime.containerStatus(id);
  if (record === undefined) return { ok: true, text: "", follow: undefined };

  let since = Number.NEGATIVE_INFINITY;
  if (options.sinceSeconds !== undefined) since = clock.now() - options.sinceSeconds * 1000;
  if (options.sinceTime !== undefined) since = Math.max(since, Date.parse(options.sinceTime));
  let lines = runtime.readLogs(id).filter((line) => line.time >= since);
  if (options.tailLines !== undefined) lines = options.tailLines === 0 ? [] : lines.slice(-options.tailLines);
  let remaining = options.limitBytes ?? Number.POSITIVE_INFINITY;
  const take = (line: LogLine): string | undefined => {
    if (remaining <= 0) return undefined;
    let text = `${options.timestamps ? `${nanoTimestamp(line.time)} ` : ""}${line.text}\n`;
    const bytes = Buffer.byteLength(text);
    if (bytes > remaining) text = Buffer.from(text).subarray(0, remaining).toString();
    remaining -= Math.min(bytes, remaining);
    return text;
  };
  let text = "";
  for (const line of lines) {
    const chunk = take(line);
    if (chunk === undefined) break;
    text += chunk;
  }
  const follow =
    options.follow && record.state === "running" && remaining > 0
      ? (write: (chunk: string) => void, end: () => void) => {
          let stop = () => {};
          stop = runtime.followLogs(
            id,
            (line) => {
              const chunk = take(line);
              if (chunk !== undefined) write(chunk);
              if (remaining <= 0) {
                stop();
                end();
              }
            },
            end,
          );
          return stop;
        }
      : undefined;
  return { ok: true, text, follow };
}

/** Which instance's log to read (`validateContainerLogStatus`). */
function containerIdFor(
  status: DeepReadonly<ContainerStatus> | undefined,
  podName: string,
  container: string,
  previous: boolean,
): { id: string } | { error: string } {
  const name = `container "${container}" in pod "${podName}"`;
  if (status === undefined) return { error: `${name} is not available` };
  const { state, lastState } = status;
  if (previous) {
    const id = lastState?.terminated?.containerID;
    return id
      ? { id }
      : { error: `previous terminated container "${container}" in pod "${podName}" not found` };
  }
  if (state?.running)
    return status.containerID ? { id: status.containerID } : { error: `${name} is not available` };
  if (state?.terminated) {
    const id = state.terminated.containerID || lastState?.terminated?.containerID;
    return id ? { id } : { error: `${name} is terminated` };
  }
  if (lastState?.terminated) {
    const id = lastState.terminated.containerID;
    return id ? { id } : { error: `${name} is terminated` };
  }
  if (state?.waiting) {
    const reason = state.waiting.reason ?? "";
    if (reason === "ErrImagePull") return { error: `${name} is waiting to start: image can't be pulled` };
    if (reason === "ImagePullBackOff")
      return { error: `${name} is waiting to start: trying and failing to pull image` };
    return { error: `${name} is waiting to start: ${reason}` };
  }
  return { error: `${name} is waiting to start - no logs yet` };
}

/** RFC 3339 with nine fractional digits, as CRI log timestamps print. */
function nanoTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
}
