import { type Deployment, deployments } from "@reconcile/api";
import {
  type AnyReplicaSet,
  deprecatedRollbackToAnnotation,
  equalIgnoreHash,
  getRollbackTo,
  lastRevision,
  revision,
  rollbackDone,
  rollbackRevisionNotFound,
  rollbackTemplateUnchanged,
  setDeploymentAnnotationsTo,
} from "../deployment-util.js";
import { adoptMetadata, eventTarget, setFromReplicaSetTemplate } from "./core.js";
import { RecreateRollout } from "./recreate.js";

/**
 * The Deployment controller's sync logic (upstream `sync.go`, `rolling.go`,
 * `recreate.go`, `rollback.go`, `progress.go`) over one Deployment copy `d`,
 * which the methods update in place as upstream's do (status, annotations,
 * resourceVersion after each write). ReplicaSets are read-only inputs; every
 * change is a write through the client.
 *
 * Each upstream file is one class in `rollout/`, on top of the one before:
 * core → sync → progress → rolling → recreate → this one, `rollback.go`.
 */
export class DeploymentRollout extends RecreateRollout {
  /**
   * Serves the deprecated rollback annotation: copies the template of the
   * requested revision (0: the previous one) into the Deployment and clears
   * the request. The next sync gives that ReplicaSet the next revision.
   */
  async rollback(d: Deployment, rsList: readonly AnyReplicaSet[]): Promise<void> {
    const [newRS, allOldRSs] = await this.getAllReplicaSetsAndSyncRevision(d, rsList, true);
    const allRSs = [...allOldRSs, newRS];
    let toRevision = getRollbackTo(d) ?? 0;
    if (toRevision === 0) {
      toRevision = lastRevision(allRSs);
      if (toRevision === 0) {
        this.recorder.event(
          eventTarget(d),
          "Warning",
          rollbackRevisionNotFound,
          "Unable to find last revision.",
        );
        return this.#updateDeploymentAndClearRollbackTo(d);
      }
    }
    for (const rs of allRSs) {
      if (rs === undefined) continue;
      let v: number;
      try {
        v = revision(rs);
      } catch {
        continue;
      }
      if (v !== toRevision) continue;
      let performed = false;
      if (!equalIgnoreHash(d.spec?.template, rs.spec?.template)) {
        setFromReplicaSetTemplate(d, rs);
        setDeploymentAnnotationsTo(d, rs);
        performed = true;
      } else {
        this.recorder.event(
          eventTarget(d),
          "Warning",
          rollbackTemplateUnchanged,
          `The rollback revision contains the same template as current deployment "${d.metadata?.name}"`,
        );
      }
      await this.#updateDeploymentAndClearRollbackTo(d);
      if (performed) {
        this.recorder.event(
          eventTarget(d),
          "Normal",
          rollbackDone,
          `Rolled back deployment "${d.metadata?.name}" to revision ${toRevision}`,
        );
      }
      return;
    }
    this.recorder.event(
      eventTarget(d),
      "Warning",
      rollbackRevisionNotFound,
      "Unable to find the revision to rollback to.",
    );
    return this.#updateDeploymentAndClearRollbackTo(d);
  }

  async #updateDeploymentAndClearRollbackTo(d: Deployment): Promise<void> {
    const annotations = d.metadata?.annotations;
    if (annotations !== undefined) delete annotations[deprecatedRollbackToAnnotation];
    const updated = await this.client
      .resource(deployments, d.metadata?.namespace ?? "")
      .update(d, this.callOptions());
    adoptMetadata(d, updated);
  }
}
