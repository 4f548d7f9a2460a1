// The headers a proxy keeps to one hop: what the API server passes on to a pod,
// a Service's endpoint or an aggregated server, and what it passes back.

/** Headers of one hop, and the client's credentials, which never reach a pod. */
export const notPassedOn = new Set([
  "authorization",
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/** Headers of the pod's answer that are its hop's alone. */
export const notPassedBack = new Set(["connection", "keep-alive", "transfer-encoding", "trailer", "upgrade"]);
