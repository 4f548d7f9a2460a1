import { defineResource, type ResourceDescriptor } from "@reconcile/api";
import { defineKind, type ResourceDefinition } from "../../kinds/definition.js";

// The kinds kube-apiserver answers without storing (the reviews), as
// discovery lists them: create only. Routing knows them too, so any other
// verb on them is a 405, as upstream answers.

const reviewDescriptors: readonly ResourceDescriptor[] = [
  ["authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews", false],
  ["authentication.k8s.io", "TokenReview", "tokenreviews", false],
  ["authorization.k8s.io", "LocalSubjectAccessReview", "localsubjectaccessreviews", true],
  ["authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews", false],
  ["authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews", false],
  ["authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews", false],
].map(([group, kind, plural, namespaced]) =>
  defineResource({
    group: group as string,
    version: "v1",
    kind: kind as string,
    plural: plural as string,
    namespaced: namespaced as boolean,
  }),
);

const reviewDefinitions: readonly ResourceDefinition[] = reviewDescriptors.map((descriptor) =>
  defineKind({ descriptor, verbs: ["create"] }),
);

/** What `serviceaccounts/token` is in discovery: a create that takes and answers a TokenRequest. */
const tokenSubresource = {
  kind: { group: "authentication.k8s.io", version: "v1", kind: "TokenRequest" },
  create(): never {
    throw new Error("serviceaccounts/token is answered over HTTP (POST .../serviceaccounts/<name>/token)");
  },
};

/** The group-versions of the reviews (`authentication.k8s.io/v1`, `authorization.k8s.io/v1`), each once. */
export const reviewGroupVersions: readonly { group: string; version: string }[] = [
  ...new Map(
    reviewDescriptors.map(({ group, version }) => [`${group}/${version}`, { group, version }]),
  ).values(),
];

/** The resources requests may name: the served ones and the reviews. */
export function routableResources(served: readonly ResourceDescriptor[]): readonly ResourceDescriptor[] {
  return [...served, ...reviewDescriptors];
}

/** The definitions discovery lists: the served ones (ServiceAccounts with `token`) and the reviews. */
export function discoveredDefinitions(served: readonly ResourceDefinition[]): ResourceDefinition[] {
  return [
    ...served.map((definition) =>
      definition.descriptor.group === "" && definition.descriptor.plural === "serviceaccounts"
        ? (Object.create(definition, {
            subresources: { value: { ...definition.subresources, token: tokenSubresource } },
          }) as ResourceDefinition)
        : definition,
    ),
    ...reviewDefinitions,
  ];
}
