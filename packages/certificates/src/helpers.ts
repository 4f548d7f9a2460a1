import type { KubeObject } from "@reconcile/api";
import {
  type CertificateRequest,
  commonNameOf,
  nameAttributeTypes,
  nameValues,
  readCertificateRequest,
} from "@reconcile/api/x509";
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.js";

// What the certificate controllers ask of a request (pkg/apis/certificates
// helpers and pkg/controller/certificates' utilities), with upstream's texts.

export type CSR = CertificateSigningRequest & KubeObject;

/** The signers built into Kubernetes (`certificates/v1` and `v1beta1`). */
export const kubeletServingSignerName = "kubernetes.io/kubelet-serving";
export const kubeAPIServerClientKubeletSignerName = "kubernetes.io/kube-apiserver-client-kubelet";
export const kubeAPIServerClientSignerName = "kubernetes.io/kube-apiserver-client";
export const legacyUnknownSignerName = "kubernetes.io/legacy-unknown";

/** `GetCertApprovalCondition`: whether an Approved and a Denied condition are present. */
export function approvalOf(csr: Pick<CSR, "status">): { approved: boolean; denied: boolean } {
  let approved = false;
  let denied = false;
  for (const condition of csr.status?.conditions ?? []) {
    if (condition.type === "Approved") approved = true;
    if (condition.type === "Denied") denied = true;
  }
  return { approved, denied };
}

/** `IsCertificateRequestApproved`: approved and not denied. */
export function isApproved(csr: Pick<CSR, "status">): boolean {
  const { approved, denied } = approvalOf(csr);
  return approved && !denied;
}

/** `HasTrueCondition`: a condition of `type` whose status is True or unset. */
export function hasTrueCondition(csr: Pick<CSR, "status">, type: string): boolean {
  return (csr.status?.conditions ?? []).some(
    (condition) => condition.type === type && (condition.status === "" || condition.status === "True"),
  );
}

/** `ParseCSR` of `spec.request` (base64 of PEM, as the JSON carries it): the request, or why not. */
export function parseRequestOf(csr: Pick<CSR, "spec">): CertificateRequest | string {
  return readCertificateRequest(Buffer.from(csr.spec?.request ?? "", "base64").toString("latin1"));
}

const sameSet = (usages: readonly string[], wanted: readonly string[]) => {
  const set = new Set(usages);
  return set.size === wanted.length && wanted.every((usage) => set.has(usage));
};

const onlySystemNodes = (request: CertificateRequest) => {
  const organizations = nameValues(request.subject, nameAttributeTypes.organization);
  return organizations.length === 1 && organizations[0] === "system:nodes";
};

const kubeletServingUsages = ["digital signature", "key encipherment", "server auth"];
const kubeletServingUsagesNoRSA = ["digital signature", "server auth"];
const kubeletClientUsages = ["client auth", "digital signature", "key encipherment"];
const kubeletClientUsagesNoRSA = ["client auth", "digital signature"];

/** `ValidateKubeletServingCSR`: why a request is not a kubelet's serving certificate request, or undefined. */
export function kubeletServingProblem(
  request: CertificateRequest,
  usages: readonly string[],
): string | undefined {
  if (!onlySystemNodes(request)) return "subject organization is not system:nodes";
  if (request.dnsNames.length === 0 && request.ipAddresses.length === 0)
    return "DNS or IP subjectAltName is required";
  if (request.emailAddresses.length > 0) return "Email subjectAltNames are not allowed";
  if (request.uris.length > 0) return "URI subjectAltNames are not allowed";
  if (!sameSet(usages, kubeletServingUsages) && !sameSet(usages, kubeletServingUsagesNoRSA))
    return `usages did not match [${kubeletServingUsages.join(" ")}]`;
  if (!commonNameOf(request.subject).startsWith("system:node:"))
    return "subject common name does not begin with system:node:";
  return undefined;
}

/** `ValidateKubeletClientCSR`: why a request is not a kubelet's client certificate request, or undefined. */
export function kubeletClientProblem(
  request: CertificateRequest,
  usages: readonly string[],
): string | undefined {
  if (!onlySystemNodes(request)) return "subject organization is not system:nodes";
  if (request.dnsNames.length > 0) return "DNS subjectAltNames are not allowed";
  if (request.emailAddresses.length > 0) return "Email subjectAltNames are not allowed";
  if (request.ipAddresses.length > 0) return "IP subjectAltNames are not allowed";
  if (request.uris.length > 0) return "URI subjectAltNames are not allowed";
  if (!commonNameOf(request.subject).startsWith("system:node:"))
    return "subject common name does not begin with system:node:";
  if (!sameSet(usages, kubeletClientUsages) && !sameSet(usages, kubeletClientUsagesNoRSA))
    return `usages did not match [${kubeletClientUsages.join(" ")}]`;
  return undefined;
}

/** `validAPIServerClientUsages`: client auth required; digital signature and key encipherment allowed. */
export function apiServerClientUsagesProblem(usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const usage of usages) {
    if (usage === "digital signature" || usage === "key encipherment") continue;
    if (usage === "client auth") clientAuth = true;
    else return `invalid usage for client certificate: ${usage}`;
  }
  if (!clientAuth) return "missing required usage for client certificate: client auth";
  return undefined;
}
