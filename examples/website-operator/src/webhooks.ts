import { type FieldError, newInvalid } from "@reconcile/api";
import { type Manager, newWebhookManagedBy, webhookPath } from "@reconcile/runtime";
import type { WebhookConfiguration } from "@reconcile/runtime/envtest";
import { type Website, websiteConversion, websites } from "./website.js";

/** The largest page a Website may hold: it travels in a ConfigMap, whose data is limited too. */
export const maxPageBytes = 64 * 1024;

/**
 * Registers the Website's webhooks on the manager's webhook server: a
 * defaulter that labels every Website with its tier, a validator that
 * refuses an empty or oversized page and more than 10 replicas and warns
 * about a Website that serves nothing (both for v1 writes), and the
 * v1alpha1 ↔ v1 conversion at `/convert`.
 */
export function setupWebsiteWebhooks(manager: Manager): void {
  newWebhookManagedBy(manager)
    .for(websites)
    .withDefaulter((website: Website) => {
      const meta = (website.metadata ??= {});
      meta.labels = { "example.reconcile.dev/tier": "standard", ...meta.labels };
    })
    .withValidator({
      validateCreate: (website: Website) => validate(website),
      validateUpdate: (website: Website) => validate(website),
    })
    .withConversion(websiteConversion)
    .complete();
}

function validate(website: Website): string[] {
  const name = website.metadata?.name ?? "";
  const problems: FieldError[] = [];
  const page = website.spec?.page ?? "";
  if (page.trim() === "")
    problems.push({
      type: "FieldValueRequired",
      field: "spec.page",
      message: "spec.page: Required value: the page is empty",
    });
  else if (Buffer.byteLength(page) > maxPageBytes)
    problems.push({
      type: "FieldValueTooLong",
      field: "spec.page",
      message: `spec.page: Too long: may not be more than ${maxPageBytes} bytes`,
    });
  const replicas = website.spec?.replicas ?? 2;
  if (replicas > 10)
    problems.push({
      type: "FieldValueInvalid",
      field: "spec.replicas",
      message: `spec.replicas: Invalid value: ${replicas}: must be no more than 10`,
    });
  if (problems.length > 0) throw newInvalid({ group: websites.group, kind: websites.kind }, name, problems);
  return replicas === 0 ? [`Website ${name} has 0 replicas: it serves nothing`] : [];
}

/** One webhook of a configuration: `mutate` or `validate` Websites on create and update, through the operator's Service. */
function websiteWebhook(kind: "mutate" | "validate") {
  return {
    name: `${kind === "mutate" ? "m" : "v"}website.example.reconcile.dev`,
    clientConfig: {
      service: { name: "website-operator-webhooks", namespace: "default", path: webhookPath(kind, websites) },
    },
    rules: [
      {
        operations: ["CREATE", "UPDATE"],
        apiGroups: [websites.group],
        apiVersions: [websites.version],
        resources: [websites.plural],
      },
    ],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
  };
}

/** The webhook configurations, as `config/webhooks.json` holds them (kubebuilder's shape). */
export const websiteWebhookConfigurations: WebhookConfiguration[] = [
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "website-operator-mutating" },
    webhooks: [websiteWebhook("mutate")],
  },
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "website-operator-validating" },
    webhooks: [websiteWebhook("validate")],
  },
];
