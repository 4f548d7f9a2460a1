import type { DeepReadonly, Pod } from "@reconcile/api";
import { pods, rfc3339 } from "@reconcile/api";
import type { Client } from "@reconcile/client";

/** Binds a pod to a node (upstream `DefaultBinder`'s `Bind`). Rejects with the API error when it fails. */
export interface Binder {
  bind(
    pod: DeepReadonly<Pod>,
    nodeName: string,
    options?: { signal?: AbortSignal | undefined },
  ): Promise<void>;
}

/** A core/v1 Binding for `pod` onto `nodeName`, carrying the pod's uid as a precondition. */
export function newBinding(pod: DeepReadonly<Pod>, nodeName: string) {
  return {
    apiVersion: "v1",
    kind: "Binding",
    metadata: {
      namespace: pod.metadata?.namespace ?? "",
      name: pod.metadata?.name ?? "",
      uid: pod.metadata?.uid ?? "",
    },
    target: { kind: "Node", name: nodeName },
  };
}

/**
 * The {@link Binder} kube-scheduler's DefaultBinder is: it posts a Binding to
 * the pod's `pods/binding` subresource, which sets `spec.nodeName` and
 * `PodScheduled=True` in one write. The `Client` interface has no call for
 * that subresource, so the binder uses what the client offers: `bindPod` (the
 * embedded API server's in-process client), or `requestJson` (`HttpClient`,
 * for any cluster). Any other `Client` (a test double) gets the same effect in
 * two writes: a patch that sets `spec.nodeName` with the pod's uid as a
 * precondition (the embedded server accepts a first nodeName by update), then
 * a status patch with `PodScheduled=True`.
 */
export class ClientBinder implements Binder {
  readonly #client: Client;
  readonly #now: () => number;

  constructor(options: { client: Client; now?: (() => number) | undefined }) {
    this.#client = options.client;
    this.#now = options.now ?? Date.now;
  }

  async bind(
    pod: DeepReadonly<Pod>,
    nodeName: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    const namespace = pod.metadata?.namespace ?? "";
    const name = pod.metadata?.name ?? "";
    const binding = newBinding(pod, nodeName);
    const client = this.#client as Client & Partial<BindingClient> & Partial<RawClient>;
    if (typeof client.bindPod === "function") {
      await client.bindPod(namespace, binding, { signal: options.signal });
      return;
    }
    if (typeof client.requestJson === "function") {
      await client.requestJson({
        method: "POST",
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/binding`,
        body: binding,
        idempotent: false,
        signal: options.signal,
      });
      return;
    }
    const resource = this.#client.resource(pods, namespace);
    await resource.patch(
      name,
      { metadata: { uid: pod.metadata?.uid }, spec: { nodeName } },
      { type: "strategic-merge", signal: options.signal },
    );
    await resource.patch(
      name,
      {
        status: {
          conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: rfc3339(this.#now()) }],
        },
      },
      { type: "strategic-merge", subresource: "status", signal: options.signal },
    );
  }
}

/** A client with a call for `pods/binding` (the embedded API server's in-process client). */
interface BindingClient {
  bindPod(namespace: string, binding: unknown, options: { signal?: AbortSignal | undefined }): Promise<void>;
}

/** A client that sends raw requests (`HttpClient`). */
interface RawClient {
  requestJson(request: {
    method: "POST";
    path: string;
    body: unknown;
    idempotent: boolean;
    signal?: AbortSignal | undefined;
  }): Promise<unknown>;
}
