import { type CustomResourceOf, defineCustomResource, k } from "@reconcile/crd";

/**
 * A static website: its page, the web server image and how many replicas
 * serve it. Defined once: the type, the descriptor and the CRD (which
 * `config/crd.json` holds for `kubectl apply -f`) all come from these schemas.
 */
export const website = defineCustomResource({
  group: "example.reconcile.dev",
  kind: "Website",
  shortNames: ["ws"],
  version: {
    name: "v1alpha1",
    spec: k.Object({
      html: k.String({ description: "The page served at `/`." }),
      replicas: k.Optional(k.Integer({ minimum: 0, default: 2 })),
      image: k.Optional(k.String({ default: "nginx:1.27" })),
    }),
    status: k.Object({
      observedGeneration: k.Optional(k.Integer()),
      availableReplicas: k.Optional(k.Integer()),
      conditions: k.Optional(
        k.Array(
          k.Object({
            type: k.String(),
            status: k.Enum(["True", "False", "Unknown"]),
            reason: k.String(),
            message: k.String(),
            observedGeneration: k.Optional(k.Integer()),
            lastTransitionTime: k.Optional(k.String({ format: "date-time" })),
          }),
        ),
      ),
    }),
  },
});

export type Website = CustomResourceOf<typeof website>;
export const websites = website.resource;
export const websiteCRD = website.crd;
