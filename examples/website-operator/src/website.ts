import { defineResource } from "@reconcile/api";
import { type CustomResourceOf, defineCustomResource, k } from "@reconcile/crd";
import type { Conversion } from "@reconcile/runtime";

const status = k.Object({
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
});

/**
 * A static website: its page, the web server image and how many replicas
 * serve it. Defined once: the type, the descriptor and the CRD (which
 * `config/crd.json` holds for `kubectl apply -f`) all come from these schemas.
 */
export const website = defineCustomResource({
  group: "example.reconcile.dev",
  kind: "Website",
  shortNames: ["ws"],
  // v1, the storage version: the page is `spec.page`.
  version: {
    name: "v1",
    spec: k.Object({
      page: k.String({ description: "The page served at `/`." }),
      replicas: k.Optional(k.Integer({ minimum: 0, default: 2 })),
      image: k.Optional(k.String({ default: "nginx:1.27" })),
    }),
    status,
  },
  // v1alpha1, still served for the clients that use it: the page was `spec.html`.
  otherVersions: [
    {
      name: "v1alpha1",
      spec: k.Object({
        html: k.String({ description: "The page served at `/`." }),
        replicas: k.Optional(k.Integer({ minimum: 0, default: 2 })),
        image: k.Optional(k.String({ default: "nginx:1.27" })),
      }),
      status,
    },
  ],
  // v1alpha1 and v1 differ in more than their apiVersion: the operator's webhook converts them
  // (the Service `default/website-operator-webhooks`, path `/convert`).
  conversion: {
    strategy: "Webhook",
    webhook: {
      clientConfig: {
        service: { name: "website-operator-webhooks", namespace: "default", path: "/convert" },
      },
      conversionReviewVersions: ["v1"],
    },
  },
});

export type Website = CustomResourceOf<typeof website>;
export const websites = website.resource;

/** A Website at v1alpha1, as its older clients write it. */
export type WebsiteV1alpha1 = Omit<Website, "spec"> & {
  spec: { html: string; replicas?: number; image?: string };
};
export const websitesV1alpha1 = defineResource<WebsiteV1alpha1>({ ...websites, version: "v1alpha1" });

/**
 * v1alpha1 converts to and from v1 (the hub) by the operator's conversion
 * webhook: `html` is `page`, the rest is the same.
 */
export const websiteConversion: Conversion = {
  hub: "v1",
  spokes: {
    v1alpha1: {
      toHub: (old: WebsiteV1alpha1): Website => {
        const { html, ...rest } = old.spec;
        return { ...old, spec: { ...rest, page: html } } as Website;
      },
      fromHub: (hub: Website): WebsiteV1alpha1 => {
        const { page, ...rest } = hub.spec;
        return { ...hub, spec: { ...rest, html: page } } as WebsiteV1alpha1;
      },
    },
  },
};

/** The CRD: what `config/crd.json` holds (`npm run crd` writes it). */
export const websiteCRD = website.crd;
