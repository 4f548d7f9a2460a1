import { defineResource, type KubeObject } from "@reconcile/api";
import type { Condition } from "@reconcile/runtime";
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.js";

/** A static website: its page, the web server image and how many replicas serve it. */
export interface Website extends KubeObject {
  apiVersion?: "example.reconcile.dev/v1alpha1";
  kind?: "Website";
  spec: {
    /** The page served at `/`. */
    html: string;
    /** Default 2. */
    replicas?: number | undefined;
    /** Default `nginx:1.27`. */
    image?: string | undefined;
  };
  status?: {
    observedGeneration?: number | undefined;
    availableReplicas?: number | undefined;
    conditions?: Condition[] | undefined;
  };
}

export const websites = defineResource<Website>({
  group: "example.reconcile.dev",
  version: "v1alpha1",
  kind: "Website",
  plural: "websites",
  namespaced: true,
  shortNames: ["ws"],
  subresources: ["status"],
});

/** The CustomResourceDefinition of `Website`, as `config/crd.json` holds it for `kubectl apply -f`. */
export const websiteCRD: CustomResourceDefinition = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "websites.example.reconcile.dev" },
  spec: {
    group: "example.reconcile.dev",
    scope: "Namespaced",
    names: {
      kind: "Website",
      listKind: "WebsiteList",
      plural: "websites",
      singular: "website",
      shortNames: ["ws"],
    },
    versions: [
      {
        name: "v1alpha1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["html"],
                properties: {
                  html: { type: "string" },
                  replicas: { type: "integer", minimum: 0, default: 2 },
                  image: { type: "string", default: "nginx:1.27" },
                },
              },
              status: {
                type: "object",
                properties: {
                  observedGeneration: { type: "integer" },
                  availableReplicas: { type: "integer" },
                  conditions: {
                    type: "array",
                    items: {
                      type: "object",
                      required: ["type", "status", "reason", "message"],
                      properties: {
                        type: { type: "string" },
                        status: { type: "string", enum: ["True", "False", "Unknown"] },
                        reason: { type: "string" },
                        message: { type: "string" },
                        observedGeneration: { type: "integer" },
                        lastTransitionTime: { type: "string", format: "date-time" },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};
