import { newBadRequest } from "@reconcile/api";

/**
 * A list continue token, as kube-apiserver's etcd3 store encodes it: base64 of
 * `{"v":"meta.k8s.io/v1","rv":<snapshot revision>,"start":"<next key, relative to the list prefix>"}`.
 */
export interface ContinueToken {
  revision: number;
  /** The key to continue from, relative to the list prefix. */
  start: string;
}

export function encodeContinue(token: ContinueToken): string {
  const json = JSON.stringify({ v: "meta.k8s.io/v1", rv: token.revision, start: token.start });
  return Buffer.from(json, "utf8").toString("base64");
}

/** Decodes a token or throws 400 BadRequest naming the problem. */
export function decodeContinue(text: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64").toString("utf8"));
  } catch {
    throw invalid("it is not base64-encoded JSON");
  }
  if (typeof parsed !== "object" || parsed === null) throw invalid("it is not a JSON object");
  const { v, rv, start } = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (v !== "meta.k8s.io/v1") throw invalid(`the encoded version ${JSON.stringify(v)} is not supported`);
  // Revisions are safe integers; 1e300 is an integer to JavaScript, and no revision.
  if (typeof rv !== "number" || !Number.isSafeInteger(rv) || rv < 1)
    throw invalid("the resource version is not valid");
  if (typeof start !== "string" || start.startsWith("/") || start.split("/").includes(".."))
    throw invalid("the start key is not valid");
  return { revision: rv, start };
}

function invalid(reason: string): Error {
  return newBadRequest(`continue key is not valid: ${reason}`);
}
