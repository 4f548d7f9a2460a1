import {
  clusterRoleBindings,
  defineResource,
  type KubeObject,
  StatusError,
  subjectAccessReviews,
} from "@reconcile/api";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../../api-server.js";

// The reviews through an in-process client, as controllers in the same
// process make them (the CSR approver's SubjectAccessReview): answered by
// the server's authorizer as over HTTP, never stored.

const selfSubjectReviews = defineResource<KubeObject & { status?: { userInfo?: unknown } }>({
  group: "authentication.k8s.io",
  version: "v1",
  kind: "SelfSubjectReview",
  plural: "selfsubjectreviews",
  namespaced: false,
});

const review = (user: string, groups: string[], verb: string) =>
  ({
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    metadata: {},
    spec: {
      user,
      groups,
      resourceAttributes: { group: "apps", resource: "deployments", verb, namespace: "default" },
    },
  }) as never;

describe("reviews through an in-process client", () => {
  it("judges a SubjectAccessReview by RBAC, as the HTTP API does", async () => {
    const api = new ApiServer();
    try {
      const admin = api.client();
      await admin.resource(clusterRoleBindings).create({
        metadata: { name: "devs-view" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "devs" }],
      } as never);
      const reviews = admin.resource(subjectAccessReviews);
      const allowed = await reviews.create(review("jane", ["devs"], "list"));
      expect(allowed.status?.allowed).toBe(true);
      expect(allowed.spec.user).toBe("jane");
      const denied = await reviews.create(review("jane", ["devs"], "delete"));
      expect(denied.status?.allowed).toBe(false);
      // Nothing is stored: there is no such collection to read.
      await expect(reviews.list()).rejects.toBeInstanceOf(StatusError);
    } finally {
      await api.close();
    }
  });

  it("asks as the caller: a user needs RBAC to create reviews; the server's own client is the loopback user", async () => {
    const api = new ApiServer();
    try {
      const jane = api.client({ user: { username: "jane" } });
      await expect(jane.resource(subjectAccessReviews).create(review("jane", [], "list"))).rejects.toThrow(
        'User "jane" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope',
      );
      const self = await jane.resource(selfSubjectReviews).create({ metadata: {} } as never);
      expect(self.status?.userInfo).toEqual({ username: "jane", groups: ["system:authenticated"] });
      const loopback = await api
        .client()
        .resource(selfSubjectReviews)
        .create({ metadata: {} } as never);
      expect(loopback.status?.userInfo).toEqual({
        username: "system:apiserver",
        groups: ["system:masters", "system:authenticated"],
      });
    } finally {
      await api.close();
    }
  });
});
