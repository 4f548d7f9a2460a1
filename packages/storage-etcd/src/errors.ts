import { errorMessage, StatusError } from "@reconcile/api";
import { StorageError } from "@reconcile/apiserver";

/** etcd's texts for a read at a compacted or a future revision (gRPC OutOfRange). */
export const compactedText = "required revision has been compacted";
export const futureRevisionText = "required revision is a future revision";

/** The text of an etcd or gRPC failure without grpc-js' `"<code> <NAME>: "` prefix, as etcd sent it. */
function etcdText(error: unknown): string {
  const message = errorMessage(error);
  return message.replace(/^\d+ [A-Z_]+: /, "");
}

/** Whether the call never reached etcd (no connection), so that repeating it cannot apply it twice. */
export function neverSent(error: unknown): boolean {
  const text = etcdText(error);
  return text.startsWith("No connection established") || text.includes("ECONNREFUSED");
}

/** Whether a read may be repeated on another member: the member is unreachable or has no leader. */
export function retriableRead(error: unknown): boolean {
  const text = etcdText(error);
  return (
    neverSent(error) ||
    text.includes("etcdserver: no leader") ||
    text.includes("etcdserver: leader changed") ||
    text.includes("etcdserver: request timed out") ||
    /^(UNAVAILABLE|14 )/.test(error instanceof Error ? error.message : "")
  );
}

/**
 * Turns a failed etcd call into what the registry reports, as kube-apiserver's
 * storage layer does: compaction is `Expired` (410), a future revision is
 * `TooLargeResourceVersion` (504), the request's own deadline is 504 Timeout,
 * and anything else is a 500 carrying etcd's text (upstream has no dedicated
 * code for "request is too large", "database space exceeded" or a lost quorum).
 */
export function fromEtcdError(error: unknown, key: string): Error {
  if (StorageError.is(error) || StatusError.isInstance(error)) return error as Error;
  const text = etcdText(error);
  if (text.includes(compactedText)) return new StorageError("Expired", key, text);
  if (text.includes(futureRevisionText)) return new StorageError("TooLargeResourceVersion", key, text);
  const message = errorMessage(error);
  if (message.startsWith("4 DEADLINE_EXCEEDED") || message.includes("Deadline exceeded")) {
    return deadlineExceeded(error);
  }
  // Keep etcd's own text (tools match on it); name etcd when the text does not.
  return new StatusError(
    { code: 500, message: text.includes("etcd") ? text : `etcd: ${text}` },
    { cause: error },
  );
}

/**
 * The 504 of a request whose deadline passed, as kube-apiserver's timeout
 * filter answers it, with etcd's last word on why (`No connection
 * established`, a deadline of its own).
 */
export function deadlineExceeded(error: unknown): StatusError {
  return new StatusError(
    {
      code: 504,
      reason: "Timeout",
      message: `Timeout: request did not complete within requested timeout - context deadline exceeded (etcd: ${etcdText(error)})`,
      details: { retryAfterSeconds: 0 },
    },
    { cause: error },
  );
}
