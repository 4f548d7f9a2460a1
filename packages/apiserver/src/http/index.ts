export { decodeKubernetesProtobuf, ProtobufDecodeError, protobufMediaType } from "../protobuf/decode.js";
export {
  type AuditLogOptions,
  type AuditWebhookOptions,
  auditLogBackend,
  auditWebhookBackend,
} from "./audit/backend.js";
export {
  type AuditBackend,
  type AuditEvent,
  type AuditObjectReference,
  type AuditOptions,
  auditIdHeader,
} from "./audit/event.js";
export {
  type AuditGroupResources,
  type AuditLevel,
  type AuditPolicy,
  type AuditPolicyRule,
  type AuditStage,
  loadAuditPolicy,
} from "./audit/policy.js";
export type { ClientUser } from "./auth/in-process.js";
export { nodeIdentity, nodesGroup } from "./auth/node-authorizer.js";
export {
  extensionAuthenticationConfigMap,
  frontProxyClientName,
  type RequestHeaderOptions,
  requestHeaderFromData,
} from "./auth/request-header.js";
export type { Classification } from "./flow-control/classify.js";
export {
  defaultServerConcurrencyLimit,
  FlowController,
  type FlowControllerOptions,
} from "./flow-control/controller.js";
export { flowSchemaUIDHeader, priorityLevelUIDHeader } from "./flow-control/filter.js";
export {
  FlowControlRejection,
  type LevelCounts,
  QueueSet,
  type QueuingShape,
  type RejectionReason,
  type SeatHolder,
  type SeatRequest,
  type SeatRequestDetails,
} from "./flow-control/queue-set.js";
export { type KubeconfigOptions, kubeconfigFor } from "./kubeconfig.js";
export type {
  ContainerLogResponse,
  KubeletConnection,
  PodExecAnswer,
  PodExecSession,
  PodLogOptions,
} from "./pod-connect.js";
export { execProtocols, exitStatus } from "./pod-exec.js";
export {
  createRequestHandler,
  type HttpHandlerOptions,
  type ListeningApiServer,
  type ListenOptions,
  listen,
  type Servable,
} from "./server.js";
export { type IncludeObject, type Table, type TableOptions, type TableRow, toTable } from "./table.js";
export {
  type CertificateAndKey,
  type FrontProxyCertificates,
  generateFrontProxyCertificates,
  generateServingCertificates,
  type ServingCertificateOptions,
  type ServingCertificates,
} from "./tls.js";
