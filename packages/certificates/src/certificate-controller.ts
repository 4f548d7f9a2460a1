import type { DeepReadonly } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  objectFromTombstone,
} from "@reconcile/controller";
import { defaultControllerRateLimiter, type RateLimiter } from "@reconcile/workqueue";
import type { CSR } from "./helpers.js";

// What the signing and approving controllers share (upstream's
// `certificates.CertificateController`): a queue of request names fed by
// every add, update and delete, and a handler that sees each request without
// a certificate yet, as a private copy.

/** Upstream's queue limiter: per request 200 ms doubling to 1000 s, overall 10/s with a burst of 100. */
export function certificateRateLimiter(clock: Clock): RateLimiter<string> {
  return defaultControllerRateLimiter({ clock, baseDelayMs: 200 });
}

export interface CertificateControllerSpec {
  /** The controller's name in logs. */
  name: string;
  context: ControllerContext;
  required: Readonly<Record<string, unknown>>;
  csrInformer: ControllerInformer<CSR>;
  /** Acts on one request that has no certificate yet (a copy it may change). */
  handle: (csr: CSR) => Promise<void>;
}

/** The harness of a certificate controller: queue `certificate`, fed by the CSR informer. */
export function certificateController(spec: CertificateControllerSpec): ControllerHarness<string> {
  const { csrInformer } = spec;
  const harness = defineController({
    name: spec.name,
    context: spec.context,
    required: spec.required,
    informers: { certificateSigningRequests: csrInformer },
    queues: [
      {
        name: "certificate",
        rateLimiter: certificateRateLimiter,
        sync: async (name) => {
          const csr = csrInformer.getIndexer().getByKey(name);
          // Gone, or already issued: nothing to do.
          if (csr === undefined || (csr.status?.certificate ?? "") !== "") return;
          // A copy of its own to change: copyJson would share a frozen cached object.
          await spec.handle(structuredClone(csr) as CSR);
        },
      },
    ],
  });
  const enqueue = (csr: DeepReadonly<CSR> | undefined, reason: string) => {
    if (csr?.metadata?.name !== undefined) harness.enqueue(csr.metadata.name, reason);
  };
  csrInformer.addEventHandler({
    onAdd: (csr) => enqueue(csr, "certificate signing request added"),
    onUpdate: (_, csr) => enqueue(csr, "certificate signing request updated"),
    onDelete: (obj) => enqueue(objectFromTombstone(obj), "certificate signing request deleted"),
  });
  return harness;
}
