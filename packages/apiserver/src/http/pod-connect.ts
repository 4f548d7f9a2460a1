// The pods subresources kube-apiserver answers by connecting to the pod's
// kubelet: `log` (LogREST, proxied to the kubelet's /containerLogs) and
// `exec` / `attach` / `portforward`. The API server reaches kubelets through
// a `KubeletConnection` it is given; with none, or for a node it cannot
// reach, the answer is a 500 as when kube-apiserver cannot dial the node.
import type http from "node:http";
import {
  type FieldError,
  newBadRequest,
  newInternalError,
  newInvalid,
  newNotFound,
  type Pod,
  pods,
  StatusError,
} from "@reconcile/api";
import type { Registry } from "../registry/registry.js";
import { isTrue } from "./parameters.js";

/** `PodLogOptions` as the kubelet receives them. */
export interface PodLogOptions {
  follow?: boolean | undefined;
  previous?: boolean | undefined;
  timestamps?: boolean | undefined;
  tailLines?: number | undefined;
  sinceSeconds?: number | undefined;
  sinceTime?: string | undefined;
  limitBytes?: number | undefined;
}

/** What a kubelet answers to `/containerLogs/{ns}/{pod}/{container}`. */
export type ContainerLogResponse =
  | {
      ok: true;
      text: string;
      /** Streams later lines (follow); returns a function that stops. */
      follow: ((write: (chunk: string) => void, end: () => void) => () => void) | undefined;
    }
  | { ok: false; code: number; message: string };

/** A command running in a container, as a kubelet's exec hands it over (see `pod-exec.ts`). */
export interface PodExecSession {
  write(data: Uint8Array): void;
  closeStdin(): void;
  resize(width: number, height: number): void;
  onOutput(listener: (stream: "stdout" | "stderr", data: Uint8Array) => void): void;
  readonly exited: Promise<number>;
  kill(): void;
}

/**
 * One forwarded connection to a port of a pod (what a kubelet's port-forward
 * dials): bytes both ways, and an end each way.
 */
export interface PodPortStream {
  write(data: Uint8Array): void;
  /** The client has nothing more to send. */
  end(): void;
  onData(listener: (data: Uint8Array) => void): void;
  /** The pod's side closed; `error` if the connection failed. */
  onEnd(listener: (error?: string) => void): void;
}

/** What a kubelet answers to an exec: the session, or the HTTP error it would send. */
export type PodExecAnswer =
  | { ok: true; session: PodExecSession }
  | { ok: false; code: number; message: string };

/** How the API server reaches kubelets (kube-apiserver's kubelet client). */
export interface KubeletConnection {
  /** Undefined when no kubelet of that name can be reached. */
  containerLogs(
    nodeName: string,
    namespace: string,
    podName: string,
    container: string,
    options: PodLogOptions,
  ): ContainerLogResponse | undefined;
  /**
   * Starts `command` in a container (the kubelet's `/exec`); undefined when
   * no kubelet of that name can be reached. Without it, exec is a 500.
   */
  exec?(
    nodeName: string,
    namespace: string,
    podName: string,
    container: string,
    command: readonly string[],
    options: { stdin: boolean; tty: boolean },
  ): PodExecAnswer | undefined;
  /** Attaches to a container's own process (the kubelet's `/attach`); undefined as for `exec`. */
  attach?(nodeName: string, namespace: string, podName: string, container: string): PodExecAnswer | undefined;
  /**
   * Opens a connection to `port` in the pod's network namespace (the
   * kubelet's `/portForward`); undefined as for `exec`, a refusal says why.
   */
  portForward?(
    nodeName: string,
    namespace: string,
    podName: string,
    port: number,
  ): { ok: true; stream: PodPortStream } | { ok: false; message: string } | undefined;
  /**
   * A request to the node's kubelet server (`nodes/{name}/proxy/<path>`):
   * its status, headers and body; undefined when no kubelet of that name
   * can be reached.
   */
  nodeProxy?(
    nodeName: string,
    method: string,
    path: string,
  ): { status: number; headers: Record<string, string>; body: string } | undefined;
}

export type PodConnectAction = "log" | "exec" | "attach" | "portforward";

export const podConnectActions: readonly PodConnectAction[] = ["log", "exec", "attach", "portforward"];

/** Answers a pods/{name}/{action} request. */
export async function servePodConnect(
  registry: Registry,
  connection: KubeletConnection | undefined,
  action: PodConnectAction,
  namespace: string,
  name: string,
  method: string,
  query: URLSearchParams,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  request.resume();
  const allowed = action === "log" ? ["GET"] : ["GET", "POST"];
  if (!allowed.includes(method)) {
    throw new StatusError({
      code: 405,
      reason: "MethodNotAllowed",
      message: `the server does not allow this method on the requested resource`,
    });
  }
  let pod: Pod;
  try {
    pod = (await registry.get(pods, namespace, name)) as Pod;
  } catch (error) {
    if (StatusError.isInstance(error) && error.status.code === 404)
      throw newNotFound({ group: "", resource: "pods" }, name);
    throw error;
  }
  const nodeName = pod.spec?.nodeName;
  if (action !== "log") {
    if (!nodeName) throw newBadRequest(`pod ${name} does not have a host assigned`);
    // exec, attach and portforward stream over an upgraded connection (pod-exec.ts), as upstream's do.
    throw newBadRequest("Upgrade request required");
  }
  const options = parseLogOptions(name, query);
  const container = chooseContainer(pod, query.get("container") ?? "");
  // kube-apiserver answers an empty log for a pod no node runs yet.
  if (!nodeName) {
    response.writeHead(200, { "Content-Type": "text/plain" });
    response.end();
    return;
  }
  const answer = connection?.containerLogs(nodeName, namespace, name, container, options);
  if (answer === undefined)
    throw newInternalError(new Error(`no kubelet answers for node ${JSON.stringify(nodeName)}`));
  if (!answer.ok) {
    if (answer.code === 400) throw newBadRequest(answer.message);
    if (answer.code >= 500) throw newInternalError(new Error(answer.message));
    throw new StatusError({
      code: answer.code,
      reason: answer.code === 404 ? "NotFound" : "Unknown",
      message: answer.message,
    });
  }
  response.writeHead(200, {
    "Content-Type": "text/plain",
    ...(answer.follow ? { "Transfer-Encoding": "chunked" } : {}),
  });
  if (answer.text !== "") response.write(answer.text);
  if (answer.follow === undefined) {
    response.end();
    return;
  }
  await new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      stop();
      response.end();
      resolve();
    };
    const stop = answer.follow!((chunk) => {
      if (!done) response.write(chunk);
    }, finish);
    response.once("close", finish);
  });
}

/** The query as `PodLogOptions`, validated as `ValidatePodLogOptions` does. */
function parseLogOptions(name: string, query: URLSearchParams): PodLogOptions {
  const options: PodLogOptions = {};
  const errors: FieldError[] = [];
  const bool = (key: string) => {
    const value = query.get(key);
    return value === null ? undefined : isTrue(value);
  };
  const int = (key: string) => {
    const value = query.get(key);
    if (value === null) return undefined;
    if (!/^-?\d+$/.test(value)) throw newBadRequest(`${key}: Invalid value: "${value}": must be an integer`);
    return Number(value);
  };
  options.follow = bool("follow");
  options.previous = bool("previous");
  options.timestamps = bool("timestamps");
  options.tailLines = int("tailLines");
  options.sinceSeconds = int("sinceSeconds");
  options.limitBytes = int("limitBytes");
  const sinceTime = query.get("sinceTime");
  if (sinceTime !== null) {
    if (Number.isNaN(Date.parse(sinceTime)))
      throw newBadRequest(`sinceTime: Invalid value: "${sinceTime}": must be an RFC 3339 time`);
    options.sinceTime = sinceTime;
  }
  const invalid = (field: string, badValue: number, detail: string) =>
    errors.push({
      type: "FieldValueInvalid",
      field,
      message: `${field}: Invalid value: ${badValue}: ${detail}`,
    });
  if (options.sinceSeconds !== undefined && options.sinceSeconds < 1)
    invalid("sinceSeconds", options.sinceSeconds, "must be greater than 0");
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined)
    invalid(
      "sinceSeconds",
      options.sinceSeconds,
      "at most one of `sinceTime` or `sinceSeconds` may be specified",
    );
  if (options.tailLines !== undefined && options.tailLines < 0)
    invalid("tailLines", options.tailLines, "must be greater than or equal to 0");
  if (options.limitBytes !== undefined && options.limitBytes < 1)
    invalid("limitBytes", options.limitBytes, "must be greater than 0");
  if (errors.length > 0) throw newInvalid({ group: "", kind: "PodLogOptions" }, name, errors);
  return options;
}

/** The container a log request reads (`podLogOptions` defaulting in LogREST). */
export function chooseContainer(pod: Pod, requested: string): string {
  const name = pod.metadata?.name ?? "";
  const all = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []),
    ...(pod.spec?.ephemeralContainers ?? []),
  ].map((c) => c.name);
  if (requested === "") {
    const regular = pod.spec?.containers ?? [];
    if (regular.length === 1 && all.length === 1) return regular[0]!.name;
    if (all.length === 0) throw newBadRequest(`a container name must be specified for pod ${name}`);
    throw newBadRequest(
      `a container name must be specified for pod ${name}, choose one of: [${all.join(" ")}]`,
    );
  }
  if (!all.includes(requested)) throw newBadRequest(`container ${requested} is not valid for pod ${name}`);
  return requested;
}
