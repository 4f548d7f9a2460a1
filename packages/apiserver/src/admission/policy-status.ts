import { type KubeObject, validatingAdmissionPolicies, type WatchEvent } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { ValidatingAdmissionPolicy } from "kubernetes-types/admissionregistration/v1.js";
import { type PolicyTypeSource, policyTypeWarnings } from "./policy-type-checking.js";

/** The field manager of the status it writes (upstream's `ControllerName`). */
export const policyStatusFieldManager = "validatingadmissionpolicy-status";

/**
 * Keeps each ValidatingAdmissionPolicy's status (upstream's
 * validatingadmissionpolicy-status controller, which kube-controller-manager
 * runs): once per generation, `observedGeneration` and the type checking's
 * warnings, applied to `/status` with force under its own field manager.
 * The server runs it itself, so a cluster without a controller manager
 * (envtest) reports type checking too.
 */
export class PolicyStatusController {
  readonly #client: Client;
  readonly #source: PolicyTypeSource;
  readonly #clock: Clock;

  constructor(options: { client: Client; source: PolicyTypeSource; clock: Clock }) {
    this.#client = options.client;
    this.#source = options.source;
    this.#clock = options.clock;
  }

  /** Watches the policies until `signal` aborts; settles once the watch has ended. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    const policies = this.#client.resource(validatingAdmissionPolicies);
    while (!signal.aborted) {
      try {
        const events = await policies.watch({ resourceVersion: "0", signal });
        for await (const event of events) await this.#handle(event);
      } catch {
        // A failed watch is restarted after a second; its synthetic ADDED events bring the state back.
      }
      if (!signal.aborted) await this.#clock.sleep(1000, { signal }).catch(() => {});
    }
  }

  async #handle(event: WatchEvent<KubeObject>): Promise<void> {
    if (event.type !== "ADDED" && event.type !== "MODIFIED") return;
    const policy = event.object as ValidatingAdmissionPolicy;
    const generation = policy.metadata?.generation ?? 0;
    if (generation <= (policy.status?.observedGeneration ?? 0)) return;
    let expressionWarnings: ReturnType<typeof policyTypeWarnings> = [];
    try {
      expressionWarnings = policyTypeWarnings(policy, this.#source);
    } catch {
      // A checker that fails says nothing; the generation is still observed, so it is not tried forever.
    }
    await this.#client
      .resource(validatingAdmissionPolicies)
      .patch(
        policy.metadata?.name ?? "",
        {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingAdmissionPolicy",
          metadata: { name: policy.metadata?.name },
          status: {
            observedGeneration: generation,
            typeChecking: expressionWarnings.length === 0 ? {} : { expressionWarnings },
          },
        },
        { type: "apply", subresource: "status", fieldManager: policyStatusFieldManager, force: true },
      )
      .catch(() => {
        // A policy deleted meanwhile needs no status; a later generation brings another event.
      });
  }
}
