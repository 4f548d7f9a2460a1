import type { AdmissionContext, AdmissionPlugin } from "../plugin.js";
import { validatingAdmissionPolicyPlugin } from "../policy.js";
import {
  mutatingWebhookPlugin,
  validatingWebhookPlugin,
  type WebhookObserver,
} from "../webhook/dispatcher.js";
import type { WebhookTransport } from "../webhook/transport.js";
import { certificateApproval, certificateSigning, certificateSubjectRestriction } from "./certificates.js";
import { claimResize } from "./claim-resize.js";
import { defaultIngressClass, defaultStorageClass } from "./default-classes.js";
import { defaultTolerationSecondsPlugin } from "./default-toleration-seconds.js";
import { limitRanger } from "./limit-ranger.js";
import { namespaceLifecycle } from "./namespace-lifecycle.js";
import { nodeRestriction } from "./node-restriction.js";
import { podSecurityPlugin } from "./pod-security.js";
import { priorityPlugin, taintNodesByCondition } from "./priority.js";
import { resourceQuotaPlugin } from "./resource-quota.js";
import { runtimeClassPlugin } from "./runtime-class.js";
import { serviceAccountPlugin } from "./service-account.js";
import { storageObjectInUseProtection } from "./storage-protection.js";

export { systemPriorityClasses } from "./priority.js";

/** What the built-in plugins are made from. */
export interface AdmissionDependencies {
  readonly context: AdmissionContext;
  /** How webhooks are called (HTTPS, or handlers served in process). */
  readonly transport: WebhookTransport;
  readonly webhookObserver?: WebhookObserver | undefined;
  /**
   * Whether what plugins add to every pod (the token volume's projection,
   * the default tolerations) may be one object that all pods hold. Only
   * while nothing after them changes an admitted object in place: plugins of
   * the server's own user may, webhooks' patches never do. Default true.
   */
  readonly sharedDefaults?: boolean | undefined;
}

type Factory = (dependencies: AdmissionDependencies) => AdmissionPlugin;
const withContext =
  (make: (context: AdmissionContext) => AdmissionPlugin): Factory =>
  ({ context }) =>
    make(context);

/** The built-in plugins, in kube-apiserver's order (`AllOrderedPlugins`), by upstream's names. */
const builtinPlugins: readonly [string, Factory][] = [
  ["NamespaceLifecycle", withContext(namespaceLifecycle)],
  ["LimitRanger", withContext(limitRanger)],
  ["ServiceAccount", (d) => serviceAccountPlugin(d.context, d.sharedDefaults ?? true)],
  ["NodeRestriction", withContext(nodeRestriction)],
  ["TaintNodesByCondition", () => taintNodesByCondition()],
  ["PodSecurity", withContext(podSecurityPlugin)],
  ["Priority", withContext(priorityPlugin)],
  ["DefaultTolerationSeconds", (d) => defaultTolerationSecondsPlugin(undefined, d.sharedDefaults ?? true)],
  ["DefaultStorageClass", withContext(defaultStorageClass)],
  ["StorageObjectInUseProtection", () => storageObjectInUseProtection()],
  ["PersistentVolumeClaimResize", withContext(claimResize)],
  ["RuntimeClass", withContext(runtimeClassPlugin)],
  ["CertificateApproval", withContext(certificateApproval)],
  ["CertificateSigning", withContext(certificateSigning)],
  ["CertificateSubjectRestriction", () => certificateSubjectRestriction()],
  ["DefaultIngressClass", withContext(defaultIngressClass)],
  // Webhooks and quota go last, as upstream orders them.
  ["MutatingAdmissionWebhook", (d) => mutatingWebhookPlugin({ ...d, observer: d.webhookObserver })],
  ["ValidatingAdmissionPolicy", withContext(validatingAdmissionPolicyPlugin)],
  ["ValidatingAdmissionWebhook", (d) => validatingWebhookPlugin({ ...d, observer: d.webhookObserver })],
  ["ResourceQuota", withContext(resourceQuotaPlugin)],
];

/** Every built-in plugin's name, in the order the chain runs them. */
export const admissionPluginNames: readonly string[] = builtinPlugins.map(([name]) => name);

/**
 * What kube-apiserver enables when no flag says otherwise (those of them this
 * server has): every plugin but NodeRestriction, which kubeadm and kind turn on
 * with `--enable-admission-plugins=NodeRestriction`.
 */
export const defaultAdmissionPlugins: readonly string[] = admissionPluginNames.filter(
  (name) => name !== "NodeRestriction",
);

/**
 * The plugins named, in kube-apiserver's order whatever the order given; an
 * unknown name is an error (as kube-apiserver refuses to start).
 */
export function builtinAdmissionPlugins(
  names: Iterable<string>,
  dependencies: AdmissionDependencies,
): AdmissionPlugin[] {
  const wanted = new Set(names);
  for (const name of wanted)
    if (!admissionPluginNames.includes(name))
      throw new Error(
        `admission plugin ${JSON.stringify(name)} is not one of ${admissionPluginNames.join(", ")}`,
      );
  return builtinPlugins.filter(([name]) => wanted.has(name)).map(([, make]) => make(dependencies));
}
