/**
 * Who a request is (upstream's `user.Info`): the name, uid, groups and extra
 * attributes an authenticator found, which the authorizer judges.
 */
export interface UserInfo {
  username: string;
  uid?: string | undefined;
  groups: string[];
  extra?: Record<string, string[]> | undefined;
}

/** Upstream's well-known groups and users (`k8s.io/apiserver/pkg/authentication/user`). */
export const systemPrivilegedGroup = "system:masters";
export const allAuthenticated = "system:authenticated";
export const allUnauthenticated = "system:unauthenticated";
export const anonymousUsername = "system:anonymous";
export const serviceAccountPrefix = "system:serviceaccount:";
export const allServiceAccountsGroup = "system:serviceaccounts";

/** The user of the server's own admin token (the kubeconfig the server writes). */
export const adminUser: UserInfo = {
  username: "reconcile-admin",
  groups: [systemPrivilegedGroup, allAuthenticated],
};

/** The server's own in-process client (kube-apiserver's loopback client). */
export const loopbackUser: UserInfo = {
  username: "system:apiserver",
  groups: [systemPrivilegedGroup, allAuthenticated],
};

/** A request without credentials, where anonymous requests are allowed. */
export const anonymousUser: UserInfo = { username: anonymousUsername, groups: [allUnauthenticated] };

/** `system:serviceaccount:<namespace>:<name>`. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${serviceAccountPrefix}${namespace}:${name}`;
}

/** The namespace and name of a ServiceAccount's username, or undefined for any other user. */
export function splitServiceAccountUsername(
  username: string,
): { namespace: string; name: string } | undefined {
  if (!username.startsWith(serviceAccountPrefix)) return undefined;
  const parts = username.slice(serviceAccountPrefix.length).split(":");
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") return undefined;
  return { namespace: parts[0]!, name: parts[1]! };
}

/** The groups every ServiceAccount of `namespace` is in. */
export function serviceAccountGroups(namespace: string): string[] {
  return [allServiceAccountsGroup, `${allServiceAccountsGroup}:${namespace}`];
}
