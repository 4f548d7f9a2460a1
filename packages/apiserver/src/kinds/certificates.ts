import { certificateSigningRequests, isDNS1123Subdomain, type KubeObject } from "@reconcile/api";
import { certificateChainProblem, certificateRequestProblem } from "@reconcile/api/x509";
import type {
  CertificateSigningRequest,
  CertificateSigningRequestCondition,
} from "kubernetes-types/certificates/v1.js";
import { copyJson } from "../json.js";
import type { AdmissionUser } from "../registry/admission.js";
import { type FieldErrors, GoSyntax } from "../registry/field-errors.js";
import { goStruct, goTime } from "../registry/go-syntax.js";
import { pathSegmentProblems } from "../registry/meta-validation.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind, type SubresourceHandler } from "./definition.js";
import { ageColumn, ageOf, column, nameColumn, nameOf, type Printer } from "./printers/columns.js";
import { humanDuration } from "./printers/human-duration.js";

// certificates.k8s.io/v1 CertificateSigningRequests as kube-apiserver serves
// them: the requester recorded from the request, the request's signature
// checked, approval through `/approval` and issuance through `/status`.

type CSR = CertificateSigningRequest & KubeObject;
type Condition = CertificateSigningRequestCondition;

/** `certificates.allValidUsages`, sorted as `sets.List` lists them. */
const validUsages = [
  "any",
  "cert sign",
  "client auth",
  "code signing",
  "content commitment",
  "crl sign",
  "data encipherment",
  "decipher only",
  "digital signature",
  "email protection",
  "encipher only",
  "ipsec end system",
  "ipsec tunnel",
  "ipsec user",
  "key agreement",
  "key encipherment",
  "microsoft sgc",
  "netscape sgc",
  "ocsp signing",
  "s/mime",
  "server auth",
  "signing",
  "timestamping",
];

const legacyUnknownSigner = "kubernetes.io/legacy-unknown";
const conditionStatuses = ["False", "True", "Unknown"];
const signerForm = "must be a fully qualified domain and path of the form 'example.com/signer-name'";

/** A `[]byte` field as the JSON carries it (base64) read as text. */
function bytesText(value: string | undefined): string {
  return Buffer.from(value ?? "", "base64").toString("latin1");
}

/** Go's `%#v` of a `[]byte`, as field errors print byte values. */
function goBytes(value: string | undefined): string {
  const bytes = Buffer.from(value ?? "", "base64");
  return `[]byte{${[...bytes].map((b) => `0x${b.toString(16)}`).join(", ")}}`;
}

/** `ValidateSignerName`: `<domain>/<path>`, the domain a DNS subdomain of two labels or more. */
function validateSignerName(signerName: string | undefined, errors: FieldErrors): void {
  const field = "spec.signerName";
  if (!signerName) {
    errors.required(field, "");
    return;
  }
  const segments = signerName.split("/");
  if (segments.length !== 2) {
    errors.invalid(field, signerName, signerForm);
    return;
  }
  const [domain, path] = segments as [string, string];
  if (domain === "") errors.required(field, signerForm);
  else {
    if (domain.split(".").length < 2)
      errors.invalid(field, signerName, "should be a domain with at least two segments separated by dots");
    for (const problem of isDNS1123Subdomain(domain)) errors.invalid(field, signerName, problem);
  }
  if (path === "") errors.required(field, signerForm);
  // A namespace, a dot and a resource name: 63 + 1 + 253.
  else if (path.length > 317) errors.tooLong(field, 317);
}

/** `validateConditions`: statuses, one condition per type, Approved and Denied only True and never both. */
function validateConditions(conditions: readonly Condition[], errors: FieldErrors): void {
  const field = "status.conditions";
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions.forEach((condition, i) => {
    if (!condition.type) errors.required(`${field}[${i}].type`, "");
    if (!conditionStatuses.includes(condition.status))
      errors.notSupported(`${field}[${i}].status`, condition.status, conditionStatuses);
    if (seen.has(condition.type)) errors.duplicate(`${field}[${i}].type`, condition.type);
    seen.add(condition.type);
    if (condition.type === "Approved" || condition.type === "Denied") {
      if (condition.type === "Approved") approved = true;
      else denied = true;
      if (condition.status !== "True")
        errors.notSupported(`${field}[${i}].status`, condition.status, ["True"]);
    }
  });
  if (approved && denied)
    errors.invalid(field, goConditions(conditions), "Approved and Denied conditions are mutually exclusive");
}

/** `validateCertificateSigningRequest`: the request, usages, duration, signer, conditions and certificate. */
function validateCSR(object: KubeObject, errors: FieldErrors): void {
  const csr = object as CSR;
  const spec = csr.spec ?? ({} as CSR["spec"]);
  const problem = certificateRequestProblem(bytesText(spec.request));
  if (problem !== undefined)
    errors.list.push({
      type: "FieldValueInvalid",
      field: "spec.request",
      message: `spec.request: Invalid value: ${goBytes(spec.request)}: ${problem}`,
    });
  const usages = spec.usages ?? [];
  if (usages.length === 0) errors.required("spec.usages", "");
  if (spec.expirationSeconds != null && spec.expirationSeconds < 600)
    errors.invalid(
      "spec.expirationSeconds",
      spec.expirationSeconds,
      "may not specify a duration less than 600 seconds (10 minutes)",
    );
  usages.forEach((usage, i) => {
    if (!validUsages.includes(usage)) errors.notSupported(`spec.usages[${i}]`, usage, validUsages);
  });
  const seen = new Set<string>();
  usages.forEach((usage, i) => {
    if (seen.has(usage)) errors.duplicate(`spec.usages[${i}]`, usage);
    seen.add(usage);
  });
  if (spec.signerName === legacyUnknownSigner)
    errors.invalid(
      "spec.signerName",
      spec.signerName,
      "the legacy signerName is not allowed via this API version",
    );
  else validateSignerName(spec.signerName, errors);
  validateConditions(csr.status?.conditions ?? [], errors);
  const chain = certificateChainProblem(bytesText(csr.status?.certificate));
  if (chain !== undefined) errors.invalid("status.certificate", "<certificate data>", chain);
}

/** `ValidateCertificateSigningRequestUpdate` beyond the whole-object checks: what was granted stays. */
function validateCSRUpdate(object: KubeObject, old: KubeObject, errors: FieldErrors): void {
  const now = (object as CSR).status ?? {};
  const before = (old as CSR).status ?? {};
  for (const type of ["Approved", "Denied", "Failed"]) {
    const count = (conditions: Condition[] | undefined) =>
      (conditions ?? []).filter((c) => c.type === type).length;
    if (count(now.conditions) < count(before.conditions))
      errors.forbidden("status.conditions", `updates may not remove a condition of type "${type}"`);
  }
  if (before.certificate && !now.certificate)
    errors.invalid("status.certificate", "<certificate data>", "updates may not remove a certificate");
  if (before.certificate && now.certificate && before.certificate !== now.certificate)
    errors.invalid("status.certificate", "<certificate data>", "updates may not modify existing certificate");
}

/**
 * `populateConditionTimestamps`: a condition without times is stamped now,
 * keeping the transition time of an old condition of the same type and status.
 */
function stampConditions(csr: CSR, old: CSR, now: string): void {
  for (const condition of csr.status?.conditions ?? []) {
    condition.lastUpdateTime ||= now;
    if (!condition.lastTransitionTime) {
      const same = (old.status?.conditions ?? []).find(
        (c) => c.type === condition.type && c.status === condition.status && c.lastTransitionTime,
      );
      condition.lastTransitionTime = same?.lastTransitionTime ?? now;
    }
  }
}

/** `preserveConditionInstances`: a status write keeps the Approved or Denied conditions as they were. */
function preserveConditions(csr: CSR, old: CSR, type: string): void {
  const conditions = csr.status?.conditions ?? [];
  const oldConditions = old.status?.conditions ?? [];
  const at = (list: Condition[]) => list.flatMap((c, i) => (c.type === type ? [i] : []));
  const newIndices = at(conditions);
  const oldIndices = at(oldConditions);
  if (newIndices.length !== oldIndices.length) return;
  newIndices.forEach((index, i) => {
    conditions[index] = copyJson(oldConditions[oldIndices[i]!]!);
  });
}

const csrStrategy: Strategy = {
  // Any name that is one path segment: upstream checks none (`ValidateCertificateRequestName`).
  nameRule: pathSegmentProblems,
  prepareForCreate(object, user?: AdmissionUser) {
    const csr = object as CSR;
    const spec = (csr.spec ??= {} as CSR["spec"]);
    delete spec.username;
    delete spec.uid;
    delete spec.groups;
    delete spec.extra;
    if (user !== undefined) {
      if (user.username) spec.username = user.username;
      if (user.uid) spec.uid = user.uid;
      if (user.groups.length > 0) spec.groups = [...user.groups];
      if (user.extra !== undefined && Object.keys(user.extra).length > 0)
        spec.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
    }
    csr.status = {};
  },
  applyDefaults(object) {
    for (const condition of (object as CSR).status?.conditions ?? []) condition.status ||= "True";
  },
  prepareForUpdate(object, old) {
    // The spec never changes; the status (kept by the registry) only through the subresources.
    (object as CSR).spec = copyJson((old as CSR).spec);
  },
  prepareForStatusUpdate(object, old, now) {
    const csr = object as CSR;
    csr.spec = copyJson((old as CSR).spec);
    preserveConditions(csr, old as CSR, "Approved");
    preserveConditions(csr, old as CSR, "Denied");
    stampConditions(csr, old as CSR, now);
  },
  // A status write keeps the spec and the approval; an approval keeps the spec and the certificate.
  resetFields: {
    status: [["spec"], ["status", "conditions"]],
    approval: [["spec"], ["status", "certificate"]],
  },
  subresourceUpdates: {
    approval(object, old, now) {
      const csr = object as CSR;
      csr.spec = copyJson((old as CSR).spec);
      const certificate = (old as CSR).status?.certificate;
      const status = (csr.status ??= {});
      if (certificate === undefined) delete status.certificate;
      else status.certificate = certificate;
      stampConditions(csr, old as CSR, now);
    },
  },
  validate: validateCSR,
  validateUpdate: validateCSRUpdate,
};

/** `/approval` (ApprovalREST): reads the whole object; writes change its conditions and nothing else. */
const approvalSubresource: SubresourceHandler = {
  get: (store, namespace, name) => store.get(namespace, name),
  update: (store, namespace, name, body, options) =>
    store.replaceAs("approval", namespace, name, body, options),
  patch: (store, namespace, name, patchType, patch, options) =>
    store.patchAs("approval", namespace, name, patchType, patch, options),
};

/** `extractCSRStatus`: Denied, Approved or Pending, then Failed and Issued. */
function csrCondition(csr: CSR): string {
  const types = new Set((csr.status?.conditions ?? []).map((c) => c.type));
  let status = types.has("Denied") ? "Denied" : types.has("Approved") ? "Approved" : "Pending";
  if (types.has("Failed")) status += ",Failed";
  if (csr.status?.certificate) status += ",Issued";
  return status;
}

const csrPrinter: Printer = {
  columns: [
    nameColumn,
    ageColumn,
    column("SignerName", "string", "signerName indicates the requested signer, and is a qualified name."),
    column("Requestor", "string", "Name of the user who created the request."),
    column(
      "RequestedDuration",
      "string",
      "expirationSeconds is the requested duration of validity of the issued certificate.",
    ),
    column("Condition", "string", "conditions applied to the request."),
  ],
  cells(object: CSR, now) {
    const spec = object.spec ?? ({} as CSR["spec"]);
    const duration =
      typeof spec.expirationSeconds === "number" ? humanDuration(spec.expirationSeconds * 1000) : "<none>";
    return [
      nameOf(object),
      ageOf(object, now),
      spec.signerName || "<none>",
      spec.username ?? "",
      duration,
      csrCondition(object),
    ];
  },
};

export const certificateSigningRequestDefinition = defineKind({
  descriptor: certificateSigningRequests,
  strategy: csrStrategy,
  printer: csrPrinter,
  protobufMessage: "CertificateSigningRequest",
  subresources: { approval: approvalSubresource },
});

/** The conditions as Go's `%#v` prints `[]certificates.CertificateSigningRequestCondition`. */
function goConditions(conditions: readonly Condition[]): GoSyntax {
  const type = "certificates.CertificateSigningRequestCondition";
  const each = conditions.map(
    (condition) =>
      goStruct(type, [
        ["Type", condition.type ?? ""],
        ["Status", condition.status ?? ""],
        ["Reason", condition.reason ?? ""],
        ["Message", condition.message ?? ""],
        ["LastUpdateTime", goTime(condition.lastUpdateTime)],
        ["LastTransitionTime", goTime(condition.lastTransitionTime)],
      ]).text,
  );
  return new GoSyntax(`[]${type}{${each.join(", ")}}`);
}
