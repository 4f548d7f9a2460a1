import { certificateSigningRequests } from "@reconcile/api";
import { nameAttributeTypes, nameValues, readCertificateRequest } from "@reconcile/api/x509";
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.js";
import {
  type AdmissionAttributes,
  type AdmissionContext,
  type AdmissionPlugin,
  forbidden,
  resourceKey,
} from "../plugin.js";

// The admission plugins of certificates.k8s.io (plugin/pkg/admission/certificates):
// who may approve a request, who may issue its certificate, and which
// subjects the kube-apiserver-client signer may not be asked for.

const csrKey = resourceKey(certificateSigningRequests);

const signerOf = (a: AdmissionAttributes) =>
  (a.object as CertificateSigningRequest | undefined)?.spec?.signerName ?? "";

/**
 * `IsAuthorizedForSignerName`: the user may `verb` the signer by its name,
 * or by its domain's wildcard (`kubernetes.io/*`). Requests of the server's
 * own clients (no user) and servers without an authorizer pass.
 */
async function mayActFor(context: AdmissionContext, a: AdmissionAttributes, verb: string): Promise<boolean> {
  if (a.user === undefined || context.authorize === undefined) return true;
  const signerName = signerOf(a);
  const ask = (name: string) =>
    context.authorize!({ user: a.user!, verb, apiGroup: "certificates.k8s.io", resource: "signers", name });
  if (await ask(signerName)) return true;
  return ask(`${signerName.split("/")[0]}/*`);
}

/** CertificateApproval: an update of `/approval` needs `approve` on the request's signer. */
export function certificateApproval(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "CertificateApproval",
    resources: [csrKey],
    async validate(a) {
      if (a.operation !== "UPDATE" || a.subresource !== "approval") return;
      if (!(await mayActFor(context, a, "approve")))
        throw forbidden(a, `user not permitted to approve requests with signerName "${signerOf(a)}"`);
    },
  };
}

/** CertificateSigning: a `/status` update that changes the certificate needs `sign` on the request's signer. */
export function certificateSigning(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "CertificateSigning",
    resources: [csrKey],
    async validate(a) {
      if (a.operation !== "UPDATE" || a.subresource !== "status") return;
      const certificate = (a.object as CertificateSigningRequest | undefined)?.status?.certificate ?? "";
      const before = (a.oldObject as CertificateSigningRequest | undefined)?.status?.certificate ?? "";
      if (certificate === before) return;
      if (!(await mayActFor(context, a, "sign")))
        throw forbidden(a, `user not permitted to sign requests with signerName "${signerOf(a)}"`);
    },
  };
}

const clientSigner = "kubernetes.io/kube-apiserver-client";

/**
 * CertificateSubjectRestriction: the kube-apiserver-client signer may not be
 * asked for a certificate in `system:masters`, which would bypass every
 * authorizer.
 */
export function certificateSubjectRestriction(): AdmissionPlugin {
  return {
    name: "CertificateSubjectRestriction",
    resources: [csrKey],
    validate(a) {
      if (a.operation !== "CREATE" || a.subresource !== "" || signerOf(a) !== clientSigner) return;
      const request = (a.object as CertificateSigningRequest | undefined)?.spec?.request ?? "";
      const parsed = readCertificateRequest(Buffer.from(request, "base64").toString("latin1"));
      if (typeof parsed === "string") return;
      if (nameValues(parsed.subject, nameAttributeTypes.organization).includes("system:masters"))
        throw forbidden(a, `use of ${clientSigner} signer with system:masters group is not allowed`);
    },
  };
}
