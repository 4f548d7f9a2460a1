import {
  type DeepReadonly,
  isAlreadyExists,
  isConflict,
  isNotFound,
  nodes,
  type Pod,
  pods,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Logger } from "@reconcile/controller";
import type { PodManager } from "./pod-manager.js";
import type { ConfigPod } from "./pod-workers/index.js";
import { isMirrorPodOf, mirrorPodOf, podFullName } from "./static-pods.js";

export interface MirrorPodsOptions {
  client: Client;
  nodeName: string;
  podManager: PodManager;
  logger: Logger;
  /** A mirror pod this kubelet created, to be handled as one the source sent. */
  onCreated: (mirror: DeepReadonly<Pod>) => void;
}

/**
 * The API server's copies of this node's static pods (upstream's
 * pod/mirror_client.go and the mirror pod part of kubelet.go): created for a
 * running static pod, replaced when the static pod changes, deleted once it
 * is gone.
 */
export class MirrorPods {
  readonly #o: MirrorPodsOptions;

  constructor(options: MirrorPodsOptions) {
    this.#o = options;
  }

  /**
   * The mirror pod part of `syncPod`: one that is being deleted or belongs
   * to an older version of the static pod is deleted, and a missing one is
   * created (once the Node exists, owned by it).
   */
  async sync(pod: ConfigPod): Promise<void> {
    const fullName = podFullName(pod);
    const mirror = this.#o.podManager.getMirrorPodByFullName(fullName);
    const resource = this.#o.client.resource(pods, pod.metadata?.namespace ?? "");
    try {
      let deleted = false;
      if (
        mirror !== undefined &&
        (mirror.metadata?.deletionTimestamp !== undefined || !isMirrorPodOf(mirror, pod))
      ) {
        await resource
          .delete(mirror.metadata?.name ?? "", {
            gracePeriodSeconds: 0,
            preconditions: { uid: mirror.metadata?.uid ?? "" },
          })
          .catch((error: unknown) => {
            if (!isNotFound(error) && !isConflict(error)) throw error;
          });
        this.#o.podManager.removeMirrorPod(fullName);
        deleted = true;
      }
      if (mirror !== undefined && !deleted) return;
      const node = await this.#o.client.resource(nodes).get(this.#o.nodeName);
      if (node.metadata?.deletionTimestamp !== undefined) return;
      const created = await resource
        .create(mirrorPodOf(pod, this.#o.nodeName, node.metadata?.uid ?? ""))
        .catch((error: unknown) => {
          if (isAlreadyExists(error)) return undefined;
          throw error;
        });
      if (created !== undefined) this.#o.onCreated(created);
    } catch (error) {
      this.#o.logger.error(
        { err: error, node: this.#o.nodeName, pod: fullName },
        "failed to sync the mirror pod",
      );
    }
  }

  /** Housekeeping (`deleteOrphanedMirrorPods`): mirror pods whose static pod is gone and stopped (not `isTerminating`). */
  deleteOrphaned(isTerminating: (fullName: string) => boolean): void {
    for (const [fullName, mirror] of this.#o.podManager.mirrorPods()) {
      if (this.#o.podManager.staticPodByFullName(fullName) !== undefined) continue;
      if (isTerminating(fullName)) continue;
      this.#o.podManager.removeMirrorPod(fullName);
      this.#o.client
        .resource(pods, mirror.metadata?.namespace ?? "")
        .delete(mirror.metadata?.name ?? "", {
          gracePeriodSeconds: 0,
          preconditions: { uid: mirror.metadata?.uid ?? "" },
        })
        .catch((error: unknown) => {
          if (!isNotFound(error) && !isConflict(error))
            this.#o.logger.error(
              { err: error, node: this.#o.nodeName, pod: fullName },
              "failed to delete an orphaned mirror pod",
            );
        });
    }
  }
}
