import { certificateSigningRequests, isNotFound, type RunOptions } from "@reconcile/api";
import { parseCertificate, pemBlocks } from "@reconcile/api/x509";
import type { Client } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  ensureIndex,
} from "@reconcile/controller";
import type { CSR } from "./helpers.js";

// kube-controller-manager's CSR cleaner (`certificatesigningrequest-cleaner-controller`,
// pkg/controller/certificates/cleaner): every hour, requests past their time
// are deleted, so that automatic requests and approvals do not pile up.

/** An index holding every request under "", so that a pass lists the cache. */
const everything = "csrcleanerAll";

/** How often every request is looked at. */
export const csrCleanerPollingIntervalMs = 60 * 60 * 1000;
/** How long an issued request is kept after its approval. */
export const approvedExpirationMs = 60 * 60 * 1000;
/** How long a denied or failed request is kept. */
export const deniedExpirationMs = 60 * 60 * 1000;
/** How long a request nobody handled is kept. */
export const pendingExpirationMs = 24 * 60 * 60 * 1000;

export interface CSRCleanerControllerOptions extends ControllerContext {
  /** Where requests are deleted. Required. */
  client: Client;
  /** The CertificateSigningRequest informer. Required. */
  csrInformer: ControllerInformer<CSR>;
}

/** Deletes requests issued, denied or failed over an hour ago, pending over a day, or whose certificate expired. */
export class CSRCleanerController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #csrs: ControllerInformer<CSR>;

  constructor(options: CSRCleanerControllerOptions) {
    const { client, csrInformer } = options;
    this.#harness = defineController({
      name: "csrcleaner",
      context: options,
      required: { client, csrInformer },
      informers: { certificateSigningRequests: csrInformer },
      // No queue is fed: the work is the hourly pass.
      queues: [{ name: "csrcleaner", sync: async () => undefined }],
      periodic: [{ name: "clean", periodMs: csrCleanerPollingIntervalMs, run: () => this.clean() }],
    });
    this.#client = client;
    this.#csrs = csrInformer;
    ensureIndex(csrInformer.getIndexer(), everything, () => [""]);
  }

  /** Builds the controller on a `SharedInformerFactory`'s CSR informer. */
  static fromInformerFactory(
    factory: { forResource(resource: typeof certificateSigningRequests): ControllerInformer<CSR> },
    options: Omit<CSRCleanerControllerOptions, "csrInformer">,
  ): CSRCleanerController {
    return new CSRCleanerController({
      ...options,
      csrInformer: factory.forResource(certificateSigningRequests),
    });
  }

  /** Waits for the cache, then cleans every hour until `signal` aborts. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** One pass: deletes every request past its time; one failed deletion does not stop the others. */
  async clean(): Promise<void> {
    const now = this.#harness.clock.now();
    for (const csr of this.#csrs.getIndexer().byIndex(everything, "")) {
      const reason = cleanupReason(csr as CSR, now);
      if (reason === undefined) continue;
      const name = csr.metadata?.name ?? "";
      this.#harness.logger.info({ csr: name }, reason);
      try {
        await this.#client.resource(certificateSigningRequests).delete(name);
      } catch (error) {
        if (isNotFound(error)) continue;
        this.#harness.logger.error({ err: error, csr: name }, "Error while attempting to clean CSR");
      }
    }
  }
}

const olderThan = (time: string | undefined, durationMs: number, now: number) => {
  if (time === undefined || time === "") return false;
  const at = Date.parse(time);
  return Number.isFinite(at) && at - now < -durationMs;
};

/** `isExpired`: the first certificate's end has passed (one that cannot be read never expires). */
function certificateExpired(csr: CSR, now: number): boolean {
  const pem = Buffer.from(csr.status?.certificate ?? "", "base64").toString("latin1");
  const block = pemBlocks(pem)[0];
  if (block === undefined) return false;
  try {
    return now > parseCertificate(block.bytes).notAfter.getTime();
  } catch {
    return false;
  }
}

/** Why upstream's cleaner deletes `csr` at `now` (its log line), or undefined to keep it. */
export function cleanupReason(csr: CSR, now: number): string | undefined {
  const conditions = csr.status?.conditions ?? [];
  const issued = (csr.status?.certificate ?? "") !== "";
  for (const condition of conditions) {
    if (
      condition.type === "Approved" &&
      issued &&
      olderThan(condition.lastUpdateTime, approvedExpirationMs, now)
    )
      return "Cleaning CSR as it is more than approvedExpiration duration old and approved.";
  }
  for (const condition of conditions) {
    if (condition.type === "Denied" && olderThan(condition.lastUpdateTime, deniedExpirationMs, now))
      return "Cleaning CSR as it is more than deniedExpiration duration old and denied.";
  }
  for (const condition of conditions) {
    if (condition.type === "Failed" && olderThan(condition.lastUpdateTime, deniedExpirationMs, now))
      return "Cleaning CSR as it is more than deniedExpiration duration old and failed.";
  }
  if (conditions.length === 0 && olderThan(csr.metadata?.creationTimestamp, pendingExpirationMs, now))
    return "Cleaning CSR as it is more than pendingExpiration duration old and unhandled.";
  if (issued && conditions.some((condition) => condition.type === "Approved") && certificateExpired(csr, now))
    return "Cleaning CSR as the associated certificate is expired.";
  return undefined;
}
