// X.509 as far as Kubernetes looks into it, read and written as Go's
// crypto/x509 does: PEM and DER, certificate signing requests, certificates
// and their names.

export * from "./der.js";
export * from "./read.js";
export * from "./write.js";
