import {
  type AnyReplicaSet,
  byCreationTimestamp,
  revisionOrUndefined,
  rsReplicas,
} from "./deployment-util.js";

// The orders the Deployment controller sorts ReplicaSets in, beyond creation time (upstream
// controller_utils.go's ReplicaSetsBySizeOlder, ReplicaSetsBySizeNewer and
// deployment_util.go's ReplicaSetsByRevision).

/** Larger first; equal sizes older first (upstream `ReplicaSetsBySizeOlder`). */
export function bySizeOlder(a: AnyReplicaSet, b: AnyReplicaSet): number {
  const diff = rsReplicas(b) - rsReplicas(a);
  return diff !== 0 ? diff : byCreationTimestamp(a, b);
}

/** Larger first; equal sizes newer first (upstream `ReplicaSetsBySizeNewer`). */
export function bySizeNewer(a: AnyReplicaSet, b: AnyReplicaSet): number {
  const diff = rsReplicas(b) - rsReplicas(a);
  return diff !== 0 ? diff : byCreationTimestamp(b, a);
}

/** Lower revision first; unparsable or equal revisions by creation time (upstream `ReplicaSetsByRevision`). */
export function byRevision(a: AnyReplicaSet, b: AnyReplicaSet): number {
  const ra = revisionOrUndefined(a);
  const rb = revisionOrUndefined(b);
  if (ra === undefined || rb === undefined || ra === rb) return byCreationTimestamp(a, b);
  return ra - rb;
}
