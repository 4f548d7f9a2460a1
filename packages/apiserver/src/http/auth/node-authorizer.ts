import { type Pod, persistentVolumes, pods } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type { PersistentVolume } from "kubernetes-types/core/v1.js";
import type { PolicyRule } from "kubernetes-types/rbac/v1.js";
import type { Attributes, ResourceAttributes } from "./attributes.js";
import { type GraphKind, NodeGraph } from "./node-graph.js";
import type { Decision } from "./rbac-authorizer.js";
import { ruleMatcher } from "./rbac-rules.js";
import type { UserInfo } from "./user.js";
import { watchKind } from "./watch-kind.js";

export const nodesGroup = "system:nodes";
const nodeUserPrefix = "system:node:";

/**
 * The node a user is (upstream's `nodeidentifier`): `system:node:<name>` in
 * the `system:nodes` group. `undefined` for a user that is not a node; ""
 * for a node user without a name.
 */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.username.startsWith(nodeUserPrefix) || !user.groups.includes(nodesGroup)) return undefined;
  return user.username.slice(nodeUserPrefix.length);
}

const noOpinion = (reason = ""): Decision => ({ allowed: false, reason });
const allow: Decision = { allowed: true, reason: "" };

/**
 * kube-apiserver's Node authorizer (`plugin/pkg/auth/authorizer/node`, with
 * `AuthorizeNodeWithSelectors` on, as in 1.32): a kubelet may read the
 * Secrets, ConfigMaps, claims, volumes and ServiceAccount tokens of the pods
 * bound to it, its own Node and Lease, and the pods bound to it; everything
 * else it may do is the static `system:node` rules. Anything else is no
 * opinion (the next authorizer, RBAC, decides), with upstream's reason.
 * What relates to which node comes from its own watch of pods and
 * PersistentVolumes, started when a node first asks.
 */
export class NodeAuthorizer {
  readonly #client: Client;
  readonly #clock: Clock;
  readonly #rules: readonly PolicyRule[];
  readonly #graph = new NodeGraph();
  readonly #stop = new AbortController();
  #ready: Promise<void> | undefined;
  #running: Promise<unknown> | undefined;
  #synced = false;

  constructor(client: Client, clock: Clock, rules: readonly PolicyRule[]) {
    this.#client = client;
    this.#clock = clock;
    this.#rules = rules;
  }

  /** Whether the graph has been listed once (decisions before that would miss every relation). */
  get synced(): boolean {
    return this.#synced;
  }

  /** Starts the pod and PersistentVolume watches on first use; settles once both are listed. */
  ready(): Promise<void> {
    if (this.#ready !== undefined) return this.#ready;
    const signal = this.#stop.signal;
    const watches = [
      watchKind(this.#client, this.#clock, pods, signal, (type, pod: Pod) => this.#graph.pod(type, pod)),
      watchKind(this.#client, this.#clock, persistentVolumes, signal, (type, volume) =>
        this.#graph.volume(type, volume as PersistentVolume),
      ),
    ];
    this.#running = Promise.allSettled(watches.map((w) => w.done));
    this.#ready = Promise.all(watches.map((w) => w.synced)).then(() => {
      this.#synced = true;
    });
    return this.#ready;
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  /** The decision for `attributes`: allowed, or no opinion (with a reason when it is the node's own limit). */
  decide(attributes: Attributes): Decision {
    const node = nodeIdentity(attributes.user);
    if (node === undefined) return noOpinion();
    if (node === "") return noOpinion(`unknown node for user ${JSON.stringify(attributes.user.username)}`);
    if (attributes.resourceRequest) {
      const subdivided = this.#subdivided(node, attributes);
      if (subdivided !== undefined) return subdivided;
    }
    const matches = ruleMatcher(attributes);
    return this.#rules.some(matches) ? allow : noOpinion();
  }

  /** The resources whose access is decided per object; undefined for the rest (the static rules decide). */
  #subdivided(node: string, a: ResourceAttributes): Decision | undefined {
    const resource = a.apiGroup === "" ? a.resource : `${a.resource}.${a.apiGroup}`;
    switch (resource) {
      case "secrets":
        return this.#readNamespaced(node, "secret", a);
      case "configmaps":
        return this.#readNamespaced(node, "configmap", a);
      case "persistentvolumeclaims":
        return a.subresource === "status" ? this.#statusUpdate(node, "pvc", a) : this.#get(node, "pvc", a);
      case "persistentvolumes":
        return this.#get(node, "pv", a);
      case "resourceclaims.resource.k8s.io":
        return this.#get(node, "resourceclaim", a);
      case "serviceaccounts":
        return this.#createToken(node, a);
      case "leases.coordination.k8s.io":
        return ownObject(node, a, "node lease", "kube-node-lease");
      case "csinodes.storage.k8s.io":
        if (a.subresource !== "") return noOpinion("cannot authorize CSINode subresources");
        return ownObject(node, a, "CSINode", undefined);
      case "nodes":
        return nodeAccess(node, a);
      case "pods":
        return this.#podAccess(node, a);
      default:
        return undefined;
    }
  }

  #statusUpdate(node: string, kind: GraphKind, a: ResourceAttributes): Decision {
    if (a.verb !== "update" && a.verb !== "patch") return noOpinion("can only get/update/patch this type");
    return this.#related(node, kind, a);
  }

  #get(node: string, kind: GraphKind, a: ResourceAttributes): Decision {
    if (a.verb !== "get") return noOpinion("can only get individual resources of this type");
    if (a.subresource !== "") return noOpinion("cannot get subresource");
    return this.#related(node, kind, a);
  }

  #readNamespaced(node: string, kind: GraphKind, a: ResourceAttributes): Decision {
    if (a.verb !== "get" && a.verb !== "list" && a.verb !== "watch")
      return noOpinion("can only read resources of this type");
    if (a.subresource !== "") return noOpinion("cannot read subresource");
    if (a.namespace === "") return noOpinion("can only read namespaced object of this type");
    return this.#related(node, kind, a);
  }

  #createToken(node: string, a: ResourceAttributes): Decision {
    if (a.verb !== "create" || a.name === "")
      return noOpinion("can only create tokens for individual service accounts");
    if (a.subresource !== "token") return noOpinion("can only create token subresource of serviceaccount");
    return this.#related(node, "serviceaccount", a);
  }

  #podAccess(node: string, a: ResourceAttributes): Decision {
    switch (a.subresource) {
      case "":
        if (a.verb === "get") return this.#get(node, "pod", a);
        if (a.verb === "list" || a.verb === "watch") {
          const scoped = (a.fieldSelector ?? []).some(
            (r) => r.field === "spec.nodeName" && r.operator === "=" && r.value === node,
          );
          if (scoped) return allow;
          if (a.name !== "") return this.#related(node, "pod", a);
          return noOpinion("can only list/watch pods with spec.nodeName field selector");
        }
        // Mirror pods; NodeRestriction limits them to pods bound to the node.
        if (a.verb === "create" || a.verb === "delete") return allow;
        break;
      case "status":
        if (a.verb === "update" || a.verb === "patch") return allow;
        break;
      case "eviction":
        if (a.verb === "create") return allow;
        break;
    }
    return noOpinion();
  }

  #related(node: string, kind: GraphKind, a: ResourceAttributes): Decision {
    if (a.name === "") return noOpinion("No Object name found");
    if (this.#graph.related(node, kind, a.namespace, a.name)) return allow;
    return noOpinion(`no relationship found between node '${node}' and this object`);
  }
}

/** A node's own Lease or CSINode: get, create, update, patch or delete, by its own name (create: NodeRestriction checks). */
function ownObject(
  node: string,
  a: ResourceAttributes,
  what: string,
  namespace: string | undefined,
): Decision {
  const verbs = ["get", "create", "update", "patch", "delete"];
  if (!verbs.includes(a.verb)) return noOpinion(`can only get, create, update, patch, or delete a ${what}`);
  if (namespace !== undefined && a.namespace !== namespace)
    return noOpinion(`can only access leases in the ${JSON.stringify(namespace)} system namespace`);
  if (a.verb !== "create" && a.name !== node)
    return noOpinion(`can only access ${what} with the same name as the requesting node`);
  return allow;
}

/** Node objects: writes go on to NodeRestriction; reads only of the node's own object, by name. */
function nodeAccess(node: string, a: ResourceAttributes): Decision {
  if (a.subresource === "") {
    if (a.verb === "create" || a.verb === "update" || a.verb === "patch") return allow;
    if (a.verb === "get" || a.verb === "list" || a.verb === "watch") {
      if (a.name === node) return allow;
      if (a.name === "") return noOpinion(`node '${node}' cannot read all nodes, only its own Node object`);
      return noOpinion(`node '${node}' cannot read '${a.name}', only its own Node object`);
    }
  } else if (a.subresource === "status" && (a.verb === "update" || a.verb === "patch")) return allow;
  return noOpinion();
}
