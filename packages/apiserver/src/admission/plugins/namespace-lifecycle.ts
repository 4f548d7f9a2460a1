import { type Namespace, namespaces, newForbidden, newNotFound, StatusError } from "@reconcile/api";
import {
  type AdmissionAttributes,
  type AdmissionContext,
  type AdmissionPlugin,
  forbidden,
  resourceKey,
  whenKnown,
} from "../plugin.js";

/** Namespaces that can never be deleted. */
export const immortalNamespaces: ReadonlySet<string> = new Set(["default", "kube-system", "kube-public"]);

/** Reviews a user may make in a namespace being deleted (they change nothing). */
const accessReviews = new Set(["authorization.k8s.io/localsubjectaccessreviews"]);

const namespaceKey = resourceKey(namespaces);

/**
 * NamespaceLifecycle: nothing is created in a namespace that does not exist
 * (404) or is being deleted (403, with the `NamespaceTerminating` cause that
 * controllers recognise), and the immortal namespaces are never deleted.
 * Deletes of other objects always pass, so a namespace can be emptied.
 */
export function namespaceLifecycle(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "NamespaceLifecycle",
    admit(a) {
      const key = resourceKey(a.resource);
      if (key === namespaceKey) {
        if (a.operation === "DELETE" && immortalNamespaces.has(a.name))
          throw newForbidden(
            { group: "", resource: "namespaces" },
            a.name,
            "this namespace may not be deleted",
          );
        return;
      }
      if (a.namespace === "" || a.operation === "DELETE" || accessReviews.has(key)) return;
      return whenKnown(context.get<Namespace>(namespaces, "", a.namespace), admitInto, a);
    },
  };
}

/** Refuses a write into `namespace` when it is missing (404), or a create when it is being deleted (403). */
function admitInto(namespace: Namespace | undefined, a: AdmissionAttributes): void {
  if (namespace === undefined) throw newNotFound({ group: "", resource: "namespaces" }, a.namespace);
  const terminating =
    namespace.status?.phase === "Terminating" || namespace.metadata?.deletionTimestamp !== undefined;
  if (a.operation !== "CREATE" || !terminating) return;
  const { status } = forbidden(
    a,
    `unable to create new content in namespace ${a.namespace} because it is being terminated`,
  );
  const cause = {
    reason: "NamespaceTerminating",
    field: "metadata.namespace",
    message: `namespace ${a.namespace} is being terminated`,
  };
  throw new StatusError({ ...status, details: { ...status.details, causes: [cause] } });
}
