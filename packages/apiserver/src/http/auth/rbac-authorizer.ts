import {
  clusterRoleBindings,
  clusterRoles,
  jsonEqual,
  type KubeObject,
  labelSelectorAsSelector,
  type ResourceDescriptor,
  roleBindings,
  roles,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import type {
  ClusterRole,
  ClusterRoleBinding,
  PolicyRule,
  Role,
  RoleBinding,
  Subject,
} from "kubernetes-types/rbac/v1.js";
import type { Attributes } from "./attributes.js";
import { ruleMatcher } from "./rbac-rules.js";
import { systemPrivilegedGroup, type UserInfo } from "./user.js";
import { type WatchedEvent, watchKind } from "./watch-kind.js";

/** An authorizer's answer (upstream's `authorizer.Decision` and reason). */
export interface Decision {
  allowed: boolean;
  reason: string;
}

type Binding = (RoleBinding | ClusterRoleBinding) & { metadata: { name: string } };

interface SubjectBinding {
  binding: Binding;
  subject: Subject;
}

/** The rules a user holds in a namespace (SelfSubjectRulesReview). */
export interface UserRules {
  resourceRules: PolicyRule[];
  nonResourceRules: PolicyRule[];
}

/**
 * kube-apiserver's default authorizer chain for this server: members of
 * `system:masters` may do anything (upstream's privileged-group authorizer,
 * ahead of RBAC), then RBAC (`plugin/pkg/auth/authorizer/rbac`): a request is
 * allowed when a ClusterRoleBinding, or a RoleBinding of the request's
 * namespace, binds the user (by name, group, or ServiceAccount) to a role
 * with a rule that matches it. Roles and bindings come from the server's own
 * watch, indexed by subject, so a decision reads only the bindings of the
 * user's name and groups.
 */
export class RbacAuthorizer {
  readonly #client: Client;
  readonly #clock: Clock;
  readonly #clusterRoles = new Map<string, ClusterRole>();
  readonly #roles = new Map<string, Role>();
  /**
   * Bindings by scope and subject key (`<namespace>|User:<name>`,
   * `<namespace>|Group:<name>`; cluster-wide ones under namespace ""), each
   * with the subject that put it there.
   */
  readonly #bySubject = new Map<string, Map<string, SubjectBinding>>();
  /** Each binding's subject keys, to unindex it. */
  readonly #subjectKeys = new Map<string, string[]>();
  #ready: Promise<void> | undefined;
  readonly #stop = new AbortController();
  #running: Promise<unknown> | undefined;
  #synced = false;
  #aggregation: Promise<void> | undefined;
  #aggregateAgain = false;

  constructor(client: Client, clock: Clock) {
    this.#client = client;
    this.#clock = clock;
  }

  /** Starts the watches on first use; settles once the four kinds are listed. */
  ready(): Promise<void> {
    if (this.#ready !== undefined) return this.#ready;
    const watches = [
      this.#watch(clusterRoles, (type, role: ClusterRole) => {
        const name = role.metadata?.name ?? "";
        if (type === "DELETED") this.#clusterRoles.delete(name);
        else this.#clusterRoles.set(name, role);
        if (this.#synced) this.#scheduleAggregation();
      }),
      this.#watch(roles, (type, role: Role) => {
        const key = `${role.metadata?.namespace ?? ""}/${role.metadata?.name ?? ""}`;
        if (type === "DELETED") this.#roles.delete(key);
        else this.#roles.set(key, role);
      }),
      this.#watch(clusterRoleBindings, (type, binding: ClusterRoleBinding) =>
        this.#index(type, binding as Binding),
      ),
      this.#watch(roleBindings, (type, binding: RoleBinding) => this.#index(type, binding as Binding)),
    ];
    this.#running = Promise.allSettled(watches.map((w) => w.done));
    this.#ready = Promise.all(watches.map((w) => w.synced)).then(async () => {
      this.#synced = true;
      await this.#aggregate();
    });
    return this.#ready;
  }

  /** Stops the watches. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  async authorize(attributes: Attributes): Promise<Decision> {
    if (attributes.user.groups.includes(systemPrivilegedGroup)) return privileged;
    await this.ready();
    return this.decide(attributes);
  }

  /** {@link authorize} on the caches as they are, once {@link ready} has settled. */
  authorizeNow(attributes: Attributes): Decision {
    if (attributes.user.groups.includes(systemPrivilegedGroup)) return privileged;
    return this.decide(attributes);
  }

  /** The decision on what the caches hold now. */
  decide(attributes: Attributes): Decision {
    const namespace = attributes.resourceRequest ? attributes.namespace : "";
    const matches = ruleMatcher(attributes);
    const verb = attributes.verb;
    for (const { binding, subject } of this.#bindingsOf(attributes.user, namespace)) {
      const rules = this.#rulesOf(binding);
      if (rules === undefined) continue;
      for (const rule of rulesWithVerb(rules, verb)) {
        if (matches(rule)) return allowedBy(binding, subject);
      }
    }
    return denied;
  }

  /** Every rule the user holds in `namespace` (cluster-wide ones included), for SelfSubjectRulesReview. */
  async rulesFor(user: UserInfo, namespace: string): Promise<UserRules> {
    if (user.groups.includes(systemPrivilegedGroup)) {
      return {
        resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      };
    }
    await this.ready();
    const result: UserRules = { resourceRules: [], nonResourceRules: [] };
    for (const { binding } of this.#bindingsOf(user, namespace)) {
      for (const rule of this.#rulesOf(binding) ?? []) {
        if ((rule.nonResourceURLs ?? []).length > 0)
          result.nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs ?? [] });
        if ((rule.resources ?? []).length > 0) {
          const { nonResourceURLs: _, ...resourceRule } = rule;
          result.resourceRules.push(resourceRule);
        }
      }
    }
    return result;
  }

  /**
   * The ClusterRole aggregation controller (upstream's
   * `clusterrole-aggregation-controller`): a ClusterRole with an
   * `aggregationRule` gets the rules of every other ClusterRole its selectors
   * match, in name order, duplicates once. Runs after each ClusterRole change.
   */
  #scheduleAggregation(): void {
    if (this.#aggregation !== undefined) {
      this.#aggregateAgain = true;
      return;
    }
    this.#aggregation = this.#aggregate().finally(() => {
      this.#aggregation = undefined;
      if (this.#aggregateAgain && !this.#stop.signal.aborted) {
        this.#aggregateAgain = false;
        this.#scheduleAggregation();
      }
    });
  }

  async #aggregate(): Promise<void> {
    const all = [...this.#clusterRoles.values()].sort((a, b) =>
      (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""),
    );
    for (const role of all) {
      const selectors = (role.aggregationRule?.clusterRoleSelectors ?? []).flatMap((selector) => {
        try {
          return [labelSelectorAsSelector(selector)];
        } catch {
          return [];
        }
      });
      if (selectors.length === 0) continue;
      const rules: PolicyRule[] = [];
      const seen = new Set<string>();
      for (const source of all) {
        if (source === role || !selectors.some((s) => s.matches(source.metadata?.labels ?? {}))) continue;
        for (const rule of source.rules ?? []) {
          const text = JSON.stringify(rule);
          if (seen.has(text)) continue;
          seen.add(text);
          rules.push(rule);
        }
      }
      if (jsonEqual(rules, role.rules ?? [])) continue;
      // A conflict means a newer version is on its way; its event aggregates again.
      await this.#client
        .resource(clusterRoles)
        .update({ ...role, rules }, { signal: this.#stop.signal })
        .catch(() => {});
    }
  }

  /** The rules of the role a binding in `namespace` refers to, as cached; undefined when it does not exist. */
  roleRules(kind: string, namespace: string, name: string): readonly PolicyRule[] | undefined {
    if (kind === "ClusterRole") {
      const role = this.#clusterRoles.get(name);
      return role === undefined ? undefined : (role.rules ?? []);
    }
    if (kind === "Role") {
      const role = this.#roles.get(`${namespace}/${name}`);
      return role === undefined ? undefined : (role.rules ?? []);
    }
    return undefined;
  }

  /**
   * The bindings that bind `user`: cluster-wide ones, then those of
   * `namespace`, each with the subject that matched (a binding that names the
   * user twice comes twice; the second look finds nothing new).
   */
  #bindingsOf(user: UserInfo, namespace: string): SubjectBinding[] {
    const found: SubjectBinding[] = [];
    const scopes = namespace === "" ? [""] : ["", namespace];
    for (const scope of scopes) {
      this.#collect(found, `${scope}|User:${user.username}`);
      for (const group of user.groups) this.#collect(found, `${scope}|Group:${group}`);
    }
    return found;
  }

  #collect(found: SubjectBinding[], key: string): void {
    const bucket = this.#bySubject.get(key);
    if (bucket !== undefined) for (const entry of bucket.values()) found.push(entry);
  }

  #watch<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    apply: (type: WatchedEvent, object: T) => void,
  ): { synced: Promise<void>; done: Promise<void> } {
    return watchKind(this.#client, this.#clock, resource, this.#stop.signal, apply);
  }

  #rulesOf(binding: Binding): readonly PolicyRule[] | undefined {
    const ref = binding.roleRef;
    if (ref.kind === "ClusterRole") return this.#clusterRoles.get(ref.name)?.rules;
    if (ref.kind === "Role") return this.#roles.get(`${binding.metadata.namespace ?? ""}/${ref.name}`)?.rules;
    return undefined;
  }

  #index(type: string, binding: Binding): void {
    const id = `${binding.kind ?? ""}|${binding.metadata.namespace ?? ""}/${binding.metadata.name}`;
    for (const key of this.#subjectKeys.get(id) ?? []) {
      const bucket = this.#bySubject.get(key);
      bucket?.delete(id);
      if (bucket?.size === 0) this.#bySubject.delete(key);
    }
    this.#subjectKeys.delete(id);
    if (type === "DELETED") return;
    const scope = binding.metadata.namespace ?? "";
    const keys: string[] = [];
    for (const subject of binding.subjects ?? []) {
      const key = `${scope}|${subjectKey(subject, binding)}`;
      if (keys.includes(key)) continue;
      keys.push(key);
      let bucket = this.#bySubject.get(key);
      if (bucket === undefined) this.#bySubject.set(key, (bucket = new Map()));
      bucket.set(id, { binding, subject });
    }
    this.#subjectKeys.set(id, keys);
  }
}

const denied: Decision = { allowed: false, reason: "" };
const privileged: Decision = { allowed: true, reason: "" };

/** An allowing decision whose reason (only reviews read it) is written when read. */
function allowedBy(binding: Binding, subject: Subject): Decision {
  let reason: string | undefined;
  return {
    allowed: true,
    get reason() {
      reason ??= `RBAC: allowed by ${describe(binding, subject)}`;
      return reason;
    },
  };
}

/** A role's rules by verb (`*` rules under every verb), made once per rules array: a decision reads only those. */
const rulesByVerb = new WeakMap<readonly PolicyRule[], Map<string, PolicyRule[]>>();

function rulesWithVerb(rules: readonly PolicyRule[], verb: string): readonly PolicyRule[] {
  let byVerb = rulesByVerb.get(rules);
  if (byVerb === undefined) {
    byVerb = new Map();
    const wildcard: PolicyRule[] = [];
    for (const rule of rules) {
      if (rule.verbs.includes("*")) wildcard.push(rule);
      for (const v of new Set(rule.verbs)) {
        if (v === "*") continue;
        let list = byVerb.get(v);
        if (list === undefined) byVerb.set(v, (list = []));
        list.push(rule);
      }
    }
    byVerb.set("*", wildcard);
    rulesByVerb.set(rules, byVerb);
  }
  const exact = byVerb.get(verb);
  const wildcard = byVerb.get("*")!;
  if (exact === undefined) return wildcard;
  if (wildcard.length === 0) return exact;
  // A rule naming the verb and `*` would come twice; the first match ends the search anyway.
  return [...exact, ...wildcard];
}

/** How a subject appears in the index: ServiceAccounts as the user name they authenticate as. */
function subjectKey(subject: Subject, binding: Binding): string {
  switch (subject.kind) {
    case "User":
      return `User:${subject.name}`;
    case "Group":
      return `Group:${subject.name}`;
    case "ServiceAccount":
      return `User:system:serviceaccount:${subject.namespace || binding.metadata.namespace || ""}:${subject.name}`;
    default:
      return `Unknown:${subject.kind}`;
  }
}

/** Upstream's binding describer: `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`. */
function describe(binding: Binding, subject: Subject): string {
  const namespace = binding.metadata.namespace;
  const name = namespace ? `${binding.metadata.name}/${namespace}` : binding.metadata.name;
  const kind = namespace ? "RoleBinding" : "ClusterRoleBinding";
  const who =
    subject.kind === "ServiceAccount" && subject.namespace
      ? `${subject.kind} ${JSON.stringify(`${subject.name}/${subject.namespace}`)}`
      : `${subject.kind} ${JSON.stringify(subject.name)}`;
  return `${kind} ${JSON.stringify(name)} of ${binding.roleRef.kind} ${JSON.stringify(binding.roleRef.name)} to ${who}`;
}
