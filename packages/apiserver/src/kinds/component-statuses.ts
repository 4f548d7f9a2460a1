import { componentStatuses, type KubeObject } from "@reconcile/api";
import type { ResourceDefinition } from "../registry/resource-definition.js";
import { defineKind } from "./definition.js";
import { column, type Loose, nameColumn } from "./printers/columns.js";

/** One component's health, as kube-apiserver's probe of its `/healthz` finds it. */
export interface ComponentHealth {
  /** `controller-manager`, `scheduler`, `etcd-0`. */
  name: string;
  healthy: boolean;
  /** What its health check answered (`ok`). */
  message?: string | undefined;
  /** Why it could not be reached, when it could not. */
  error?: string | undefined;
}

/** What a server knows of its control plane's components, asked on each read. */
export type ComponentStatusProvider = () => readonly ComponentHealth[];

/** A component's health as the ComponentStatus object kube-apiserver computes (`Healthy` condition). */
function componentStatusOf(health: ComponentHealth): KubeObject {
  const condition: Record<string, string> = { type: "Healthy", status: health.healthy ? "True" : "False" };
  if (health.message) condition.message = health.message;
  if (health.error) condition.error = health.error;
  return {
    kind: "ComponentStatus",
    apiVersion: "v1",
    metadata: { name: health.name, creationTimestamp: null } as never,
    conditions: [condition],
  } as KubeObject;
}

/**
 * `v1` ComponentStatus (upstream's componentstatus REST): get and list only,
 * computed on each read from `provider`, with upstream's deprecation warning
 * and table (Name, Status, Message, Error).
 */
export function componentStatusDefinition(provider: ComponentStatusProvider): ResourceDefinition {
  return defineKind({
    descriptor: componentStatuses,
    verbs: ["get", "list"],
    openAPI: undefined,
    warning: "v1 ComponentStatus is deprecated in v1.19+",
    source: { list: () => provider().map(componentStatusOf) },
    printer: {
      columns: [
        { ...nameColumn, description: "Name must be unique within a namespace." },
        column("Status", "string", "Status of the component conditions"),
        column("Message", "string", "Message of the component conditions"),
        column("Error", "string", "Error of the component conditions"),
      ],
      cells: (object: Loose) => {
        const healthy = (Array.isArray(object.conditions) ? object.conditions : []).find(
          (condition: Loose) => condition?.type === "Healthy",
        );
        const status =
          healthy === undefined ? "Unknown" : healthy.status === "True" ? "Healthy" : "Unhealthy";
        return [object.metadata?.name ?? "", status, healthy?.message ?? "", healthy?.error ?? ""];
      },
    },
  });
}
