import type { DeepReadonly, Pod } from "@reconcile/api";
import { pods } from "@reconcile/api";
import type { Client } from "@reconcile/client";

/** Binds a pod to a node (upstream `DefaultBinder`'s `Bind`). Rejects with the API error when it fails. */
export interface Binder {
  bind(
    pod: DeepReadonly<Pod>,
    nodeName: string,
    options?: { signal?: AbortSignal | undefined },
  ): Promise<void>;
}

/**
 * A {@link Binder} over a `Client`. kube-scheduler posts a `Binding` to the
 * `pods/binding` subresource, which sets `spec.nodeName` and the
 * `PodScheduled=True` condition in one write. The `Client` interface has no
 * way to post to that subresource yet, so this binder makes the same change
 * in two writes the embedded API server accepts: a patch that sets
 * `spec.nodeName` once (with the pod's uid as a precondition, as a Binding
 * carries it), then a status patch with `PodScheduled=True`. A real
 * kube-apiserver refuses the first write (nodeName is immutable by update):
 * use a binder that posts Bindings there.
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
    const resource = this.#client.resource(pods, pod.metadata?.namespace ?? "");
    const name = pod.metadata?.name ?? "";
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

/** RFC 3339 with whole seconds, as Kubernetes writes condition times. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
