import { certificateSigningRequests, type RunOptions, subjectAccessReviews } from "@reconcile/api";
import { type CertificateRequest, commonNameOf } from "@reconcile/api/x509";
import type { Client } from "@reconcile/client";
import type { ControllerContext, ControllerHarness, ControllerInformer } from "@reconcile/controller";
import type { ResourceAttributes } from "kubernetes-types/authorization/v1.js";
import { certificateController } from "./certificate-controller.js";
import {
  approvalOf,
  type CSR,
  kubeAPIServerClientKubeletSignerName,
  kubeletClientProblem,
  parseRequestOf,
} from "./helpers.js";

// kube-controller-manager's CSR approving controller
// (`certificatesigningrequest-approving-controller`, pkg/controller/certificates/approver):
// a kubelet's client certificate request is approved when its requester may
// create `certificatesigningrequests/selfnodeclient` (renewing its own) or
// `certificatesigningrequests/nodeclient` (a new node), as a
// SubjectAccessReview of the requester recorded in the request answers.

interface Recognizer {
  recognize(csr: CSR, request: CertificateRequest): boolean;
  permission: ResourceAttributes;
  successMessage: string;
}

const isNodeClientCert = (csr: CSR, request: CertificateRequest) =>
  csr.spec.signerName === kubeAPIServerClientKubeletSignerName &&
  kubeletClientProblem(request, csr.spec.usages ?? []) === undefined;

const recognizers: readonly Recognizer[] = [
  {
    recognize: (csr, request) =>
      csr.spec.username === commonNameOf(request.subject) && isNodeClientCert(csr, request),
    permission: {
      group: "certificates.k8s.io",
      resource: "certificatesigningrequests",
      verb: "create",
      subresource: "selfnodeclient",
    },
    successMessage: "Auto approving self kubelet client certificate after SubjectAccessReview.",
  },
  {
    recognize: isNodeClientCert,
    permission: {
      group: "certificates.k8s.io",
      resource: "certificatesigningrequests",
      verb: "create",
      subresource: "nodeclient",
    },
    successMessage: "Auto approving kubelet client certificate after SubjectAccessReview.",
  },
];

/** A request recognized but not allowed: retried with backoff, as upstream's `IgnorableError`. */
export class NotApprovedError extends Error {}

export interface CSRApprovingControllerOptions extends ControllerContext {
  /** Where reviews are made and approvals written. Required. */
  client: Client;
  /** The CertificateSigningRequest informer. Required. */
  csrInformer: ControllerInformer<CSR>;
}

/** Approves kubelets' client certificate requests that their requesters are allowed to make. */
export class CSRApprovingController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;

  constructor(options: CSRApprovingControllerOptions) {
    const { client, csrInformer } = options;
    this.#harness = certificateController({
      name: "csrapproving",
      context: options,
      required: { client, csrInformer },
      csrInformer,
      handle: (csr) => this.handle(csr),
    });
    this.#client = client;
  }

  /** Builds the controller on a `SharedInformerFactory`'s CSR informer. */
  static fromInformerFactory(
    factory: { forResource(resource: typeof certificateSigningRequests): ControllerInformer<CSR> },
    options: Omit<CSRApprovingControllerOptions, "csrInformer">,
  ): CSRApprovingController {
    return new CSRApprovingController({
      ...options,
      csrInformer: factory.forResource(certificateSigningRequests),
    });
  }

  /** Runs `workers` workers (default 1) until `signal` aborts; settles after a full stop. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Upstream's `sarApprover.handle` for one request without a certificate. */
  async handle(csr: CSR): Promise<void> {
    const { approved, denied } = approvalOf(csr);
    if (approved || denied) return;
    const name = csr.metadata?.name ?? "";
    const request = parseRequestOf(csr);
    if (typeof request === "string")
      throw new Error(`unable to parse csr ${JSON.stringify(name)}: ${request}`);
    const tried: string[] = [];
    for (const recognizer of recognizers) {
      if (!recognizer.recognize(csr, request)) continue;
      tried.push(recognizer.permission.subresource ?? "");
      if (!(await this.#authorize(csr, recognizer.permission))) continue;
      csr.status = {
        ...csr.status,
        conditions: [
          ...(csr.status?.conditions ?? []),
          { type: "Approved", status: "True", reason: "AutoApproved", message: recognizer.successMessage },
        ],
      };
      try {
        await this.#client.resource(certificateSigningRequests).update(csr, { subresource: "approval" });
      } catch (error) {
        throw new Error(`error updating approval for csr: ${(error as Error).message}`, { cause: error });
      }
      return;
    }
    if (tried.length > 0)
      throw new NotApprovedError(
        `recognized csr ${JSON.stringify(name)} as [${tried.join(" ")}] but subject access review was not approved`,
      );
  }

  /** Whether the requester recorded in `csr` may do `attributes`. */
  async #authorize(csr: CSR, attributes: ResourceAttributes): Promise<boolean> {
    const review = await this.#client.resource(subjectAccessReviews).create({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      metadata: {},
      spec: {
        ...(csr.spec.username === undefined ? {} : { user: csr.spec.username }),
        ...(csr.spec.uid === undefined ? {} : { uid: csr.spec.uid }),
        ...(csr.spec.groups === undefined ? {} : { groups: csr.spec.groups }),
        ...(csr.spec.extra === undefined ? {} : { extra: csr.spec.extra }),
        resourceAttributes: attributes,
      },
    });
    return review.status?.allowed === true;
  }
}
