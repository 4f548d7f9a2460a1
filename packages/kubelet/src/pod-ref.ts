import type { DeepReadonly, Pod } from "@reconcile/api";

/** The object reference of a pod's Events (`ref.GetReference`): its identity and resourceVersion. */
export interface PodRef {
  kind: "Pod";
  apiVersion: "v1";
  namespace: string;
  name: string;
  uid: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** The involved object of a pod's events; `fieldPath` names one container (`spec.containers{web}`). */
export function podRef(pod: DeepReadonly<Pod> | Pod, fieldPath?: string): PodRef {
  const ref: PodRef = {
    kind: "Pod",
    apiVersion: "v1",
    namespace: pod.metadata?.namespace ?? "",
    name: pod.metadata?.name ?? "",
    uid: pod.metadata?.uid ?? "",
  };
  if (pod.metadata?.resourceVersion) ref.resourceVersion = pod.metadata.resourceVersion;
  if (fieldPath !== undefined) ref.fieldPath = fieldPath;
  return ref;
}
