import { newBadRequest, type ResourceDescriptor } from "@reconcile/api";
import { pathSegmentProblems } from "../meta-validation.js";

/** The storage key of one object. */
export function keyOf(resource: ResourceDescriptor, namespace: string | undefined, name: string): string {
  return resource.namespaced ? `${prefixOf(resource)}${namespace}/${name}` : `${prefixOf(resource)}${name}`;
}

/** The key of the object a request names, after checking the name and namespace are one path segment each. */
export function objectKey(resource: ResourceDescriptor, namespace: string | undefined, name: string): string {
  if (typeof name !== "string" || name === "") throw newBadRequest("a name is required");
  // As kube-apiserver's NamespaceKeyFunc: a name that is not one path segment would address another key.
  const problems = pathSegmentProblems(name);
  if (problems.length > 0)
    throw newBadRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${problems.join(";")}`);
  if (resource.namespaced && !namespace)
    throw newBadRequest(`a namespace is required for ${resource.plural}: bind the client to a namespace`);
  return keyOf(resource, checkNamespace(resource, namespace), name);
}

/** The key prefix of a list or watch: one namespace's objects, or all of them. */
export function collectionPrefix(resource: ResourceDescriptor, namespace: string | undefined): string {
  namespace = checkNamespace(resource, namespace);
  return resource.namespaced && namespace ? `${prefixOf(resource)}${namespace}/` : prefixOf(resource);
}

function checkNamespace(resource: ResourceDescriptor, namespace: string | undefined): string | undefined {
  if (!resource.namespaced || !namespace) return namespace;
  const problems = pathSegmentProblems(namespace);
  if (problems.length > 0)
    throw newBadRequest(`Namespace parameter invalid: ${JSON.stringify(namespace)}: ${problems.join(";")}`);
  return namespace;
}

function prefixOf(resource: Pick<ResourceDescriptor, "group" | "plural">): string {
  return `/${resource.group || "core"}/${resource.plural}/`;
}
