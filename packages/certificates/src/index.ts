export {
  CSRApprovingController,
  type CSRApprovingControllerOptions,
  NotApprovedError,
} from "./approver.js";
export {
  CertificateAuthority,
  keyUsagesFromStrings,
  SigningError,
  type SigningPolicy,
} from "./authority.js";
export { certificateRateLimiter } from "./certificate-controller.js";
export {
  approvedExpirationMs,
  CSRCleanerController,
  type CSRCleanerControllerOptions,
  cleanupReason,
  csrCleanerPollingIntervalMs,
  deniedExpirationMs,
  pendingExpirationMs,
} from "./cleaner.js";
export {
  apiServerClientUsagesProblem,
  approvalOf,
  type CSR,
  hasTrueCondition,
  isApproved,
  kubeAPIServerClientKubeletSignerName,
  kubeAPIServerClientSignerName,
  kubeletClientProblem,
  kubeletServingProblem,
  kubeletServingSignerName,
  legacyUnknownSignerName,
} from "./helpers.js";
export {
  backdateMs,
  CSRSigningController,
  type CSRSigningControllerOptions,
  defaultCertificateDurationMs,
  kubernetesSignerNames,
  minimumCertificateDurationMs,
  shortCertificateMs,
} from "./signer.js";
