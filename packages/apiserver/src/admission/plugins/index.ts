import type { AdmissionContext, AdmissionPlugin } from "../plugin.js";
import { defaultIngressClass, defaultStorageClass } from "./default-classes.js";
import { defaultTolerationSecondsPlugin } from "./default-toleration-seconds.js";
import { limitRanger } from "./limit-ranger.js";
import { namespaceLifecycle } from "./namespace-lifecycle.js";
import { priorityPlugin, taintNodesByCondition } from "./priority.js";
import { resourceQuotaPlugin } from "./resource-quota.js";
import { serviceAccountPlugin } from "./service-account.js";

export { systemPriorityClasses } from "./priority.js";

/** The built-in plugins, in kube-apiserver's order (`AllOrderedPlugins`), by upstream's names. */
const builtinPlugins: readonly [string, (context: AdmissionContext) => AdmissionPlugin][] = [
  ["NamespaceLifecycle", namespaceLifecycle],
  ["LimitRanger", limitRanger],
  ["ServiceAccount", serviceAccountPlugin],
  ["TaintNodesByCondition", taintNodesByCondition],
  ["Priority", priorityPlugin],
  ["DefaultTolerationSeconds", () => defaultTolerationSecondsPlugin()],
  ["DefaultStorageClass", defaultStorageClass],
  ["DefaultIngressClass", defaultIngressClass],
  ["ResourceQuota", resourceQuotaPlugin],
];

/** Every built-in plugin's name, in the order the chain runs them. */
export const admissionPluginNames: readonly string[] = builtinPlugins.map(([name]) => name);

/** What kube-apiserver enables when no flag says otherwise (those of them this server has). */
export const defaultAdmissionPlugins: readonly string[] = admissionPluginNames;

/**
 * The plugins named, in kube-apiserver's order whatever the order given; an
 * unknown name is an error (as kube-apiserver refuses to start).
 */
export function builtinAdmissionPlugins(
  names: Iterable<string>,
  context: AdmissionContext,
): AdmissionPlugin[] {
  const wanted = new Set(names);
  for (const name of wanted)
    if (!admissionPluginNames.includes(name))
      throw new Error(
        `admission plugin ${JSON.stringify(name)} is not one of ${admissionPluginNames.join(", ")}`,
      );
  return builtinPlugins.filter(([name]) => wanted.has(name)).map(([, make]) => make(context));
}
