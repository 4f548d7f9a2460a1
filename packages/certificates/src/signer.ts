import { certificateSigningRequests, type RunOptions, rfc3339 } from "@reconcile/api";
import { type CertificateRequest, pemBlock } from "@reconcile/api/x509";
import type { Client } from "@reconcile/client";
import type { ControllerContext, ControllerHarness, ControllerInformer } from "@reconcile/controller";
import { CertificateAuthority } from "./authority.js";
import { certificateController } from "./certificate-controller.js";
import {
  apiServerClientUsagesProblem,
  type CSR,
  hasTrueCondition,
  isApproved,
  kubeAPIServerClientKubeletSignerName,
  kubeAPIServerClientSignerName,
  kubeletClientProblem,
  kubeletServingProblem,
  kubeletServingSignerName,
  legacyUnknownSignerName,
  parseRequestOf,
} from "./helpers.js";

// kube-controller-manager's CSR signing controller
// (`certificatesigningrequest-signing-controller`, pkg/controller/certificates/signer):
// an approved request for one of the kubernetes.io signers gets a
// certificate from the cluster's CA in `status.certificate`, or, when the
// request does not fit its signer, a Failed condition saying why.

/** Why a request does not fit a signer (undefined: it fits), by signer name (`getCSRVerificationFuncForSignerName`). */
const signerChecks: Readonly<
  Record<string, (request: CertificateRequest, usages: readonly string[]) => string | undefined>
> = {
  [kubeletServingSignerName]: kubeletServingProblem,
  [kubeAPIServerClientKubeletSignerName]: kubeletClientProblem,
  [kubeAPIServerClientSignerName]: (_, usages) => apiServerClientUsagesProblem(usages),
  // No restrictions, to stay compatible with v1beta1.
  [legacyUnknownSignerName]: () => undefined,
};

/** The signers upstream runs, in its order. */
export const kubernetesSignerNames: readonly string[] = Object.keys(signerChecks);

/** `--cluster-signing-duration`'s default: a year. */
export const defaultCertificateDurationMs = 365 * 24 * 60 * 60 * 1000;
/** How far back a certificate's validity starts, against clock skew. */
export const backdateMs = 5 * 60 * 1000;
/** Certificates living less than this keep their whole requested life after now. */
export const shortCertificateMs = 8 * 60 * 60 * 1000;
/** The shortest certificate issued for a request's `expirationSeconds` (twice the backdate). */
export const minimumCertificateDurationMs = 10 * 60 * 1000;

export interface CSRSigningControllerOptions extends ControllerContext {
  /** Where requests are updated. Required. */
  client: Client;
  /** The CertificateSigningRequest informer. Required. */
  csrInformer: ControllerInformer<CSR>;
  /**
   * The CA that signs (`--cluster-signing-cert-file` and `--cluster-signing-key-file`): PEM
   * certificate and key, or an authority already built. Required.
   */
  ca: { cert: string; key: string } | CertificateAuthority;
  /** The longest certificate issued (`--cluster-signing-duration`). Default a year. */
  certificateDurationMs?: number | undefined;
  /** The signers served. Default: all four of {@link kubernetesSignerNames}. */
  signerNames?: readonly string[] | undefined;
}

/**
 * Signs approved requests for the kubernetes.io signers: `kube-apiserver-client`
 * (client certificates the API server accepts), `kube-apiserver-client-kubelet`,
 * `kubelet-serving` and `legacy-unknown`, each with upstream's checks.
 */
export class CSRSigningController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #authority: CertificateAuthority;
  readonly #durationMs: number;
  readonly #signerNames: ReadonlySet<string>;

  constructor(options: CSRSigningControllerOptions) {
    const { client, csrInformer, ca } = options;
    this.#harness = certificateController({
      name: "csrsigning",
      context: options,
      required: { client, csrInformer, ca },
      csrInformer,
      handle: (csr) => this.handle(csr),
    });
    this.#client = client;
    this.#authority = ca instanceof CertificateAuthority ? ca : new CertificateAuthority(ca.cert, ca.key);
    this.#durationMs = options.certificateDurationMs ?? defaultCertificateDurationMs;
    if (!(this.#durationMs > 0))
      throw new RangeError(
        `CSRSigningController: certificateDurationMs must be positive, got ${this.#durationMs}`,
      );
    const signerNames = options.signerNames ?? kubernetesSignerNames;
    for (const name of signerNames) {
      if (signerChecks[name] === undefined)
        throw new RangeError(`unrecognized signerName: ${JSON.stringify(name)}`);
    }
    this.#signerNames = new Set(signerNames);
  }

  /** Builds the controller on a `SharedInformerFactory`'s CSR informer. */
  static fromInformerFactory(
    factory: { forResource(resource: typeof certificateSigningRequests): ControllerInformer<CSR> },
    options: Omit<CSRSigningControllerOptions, "csrInformer">,
  ): CSRSigningController {
    return new CSRSigningController({
      ...options,
      csrInformer: factory.forResource(certificateSigningRequests),
    });
  }

  /** Runs `workers` workers (default 1) until `signal` aborts; settles after a full stop. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** Upstream's `signer.handle` for one request without a certificate (changed in place, then written). */
  async handle(csr: CSR): Promise<void> {
    if (!isApproved(csr) || hasTrueCondition(csr, "Failed")) return;
    const signerName = csr.spec.signerName;
    const check = signerChecks[signerName];
    if (check === undefined || !this.#signerNames.has(signerName)) return;
    const name = csr.metadata?.name ?? "";
    const request = parseRequestOf(csr);
    if (typeof request === "string")
      throw new Error(`unable to parse csr ${JSON.stringify(name)}: ${request}`);
    const usages = csr.spec.usages ?? [];
    const problem = check(request, usages);
    const api = this.#client.resource(certificateSigningRequests);
    if (problem !== undefined) {
      csr.status = {
        ...csr.status,
        conditions: [
          ...(csr.status?.conditions ?? []),
          {
            type: "Failed",
            status: "True",
            reason: "SignerValidationFailure",
            message: problem,
            lastUpdateTime: rfc3339(this.#harness.clock.now()),
          },
        ],
      };
      try {
        await api.updateStatus(csr);
      } catch (error) {
        throw new Error(`error adding failure condition for csr: ${(error as Error).message}`, {
          cause: error,
        });
      }
      return;
    }
    let certificate: string;
    try {
      certificate = this.sign(csr, request);
    } catch (error) {
      throw new Error(`error auto signing csr: ${(error as Error).message}`, { cause: error });
    }
    csr.status = { ...csr.status, certificate: Buffer.from(certificate, "latin1").toString("base64") };
    try {
      await api.updateStatus(csr);
    } catch (error) {
      throw new Error(`error updating signature for csr: ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * The certificate (PEM) the CA issues now for `request`, which `csr`
   * carries: its usages, for the shorter of the signer's and the requested life.
   */
  sign(csr: CSR, request: CertificateRequest): string {
    const der = this.#authority.sign(request, {
      ttlMs: this.durationFor(csr.spec.expirationSeconds),
      usages: csr.spec.usages ?? [],
      backdateMs,
      shortMs: shortCertificateMs,
      now: new Date(this.#harness.clock.now()),
    });
    return pemBlock("CERTIFICATE", der);
  }

  /** `signer.duration`: the signer's duration, shortened to `expirationSeconds` but never under ten minutes. */
  durationFor(expirationSeconds: number | null | undefined): number {
    if (expirationSeconds == null) return this.#durationMs;
    const requested = expirationSeconds * 1000;
    if (requested > this.#durationMs) return this.#durationMs;
    if (requested < minimumCertificateDurationMs) return minimumCertificateDurationMs;
    return requested;
  }
}
