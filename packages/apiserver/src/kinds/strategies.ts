import type { ResourceDescriptor } from "@reconcile/api";
import { dnsSubdomainName } from "../registry/meta-validation.js";
import type { Strategy } from "../registry/strategy.js";
import { appsStrategies } from "./apps.js";
import { coreStrategies } from "./core.js";
import { podStrategy } from "./pod.js";

const strategies: Readonly<Record<string, Strategy>> = {
  "/Pod": podStrategy,
  ...appsStrategies,
  ...coreStrategies,
};

const genericStrategy: Strategy = { nameRule: dnsSubdomainName };

/** The strategy of a resource's kind; kinds without one are stored with name validation only. */
export function strategyFor(resource: Pick<ResourceDescriptor, "group" | "kind">): Strategy {
  return strategies[`${resource.group}/${resource.kind}`] ?? genericStrategy;
}
