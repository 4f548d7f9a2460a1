import { services } from "@reconcile/api";
import type { Service } from "kubernetes-types/core/v1.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { goStrings } from "../registry/go-syntax.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import { servicePrinter } from "./printers/index.js";
import { initIPFamilyFields, sameStrings } from "./service-families.js";
import { needsHealthCheckPort, needsNodePorts, serviceIPHooks } from "./service-ips.js";
import { validateServicePorts } from "./service-ports.js";

// Services: upstream's defaults, the strategy's handling of type changes
// (pkg/registry/core/service/strategy.go) and the parts of
// `ValidateService` that concern what the server allocates.

/**
 * Upstream's Service defaults (`SetDefaults_Service`, and the registry's IP
 * family fields on create). Cluster IPs and node ports are allocated by the
 * kind's write hooks, not here.
 */
const serviceStrategy: Strategy = {
  prepareForCreate(object, _user, { serviceIPs }) {
    initIPFamilyFields(object as Service, undefined, serviceIPs?.families);
  },
  prepareForUpdate(object, old) {
    dropTypeDependentFields(object as Service, old as Service);
  },
  applyDefaults(object) {
    const spec = ((object as Service).spec ??= {});
    spec.type ??= "ClusterIP";
    spec.sessionAffinity ??= "None";
    if (spec.sessionAffinity === "ClientIP") {
      const clientIP = ((spec.sessionAffinityConfig ??= {}).clientIP ??= {});
      clientIP.timeoutSeconds ??= 10_800;
    }
    for (const port of spec.ports ?? []) {
      port.protocol ||= "TCP";
      if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === "") {
        port.targetPort = port.port;
      }
    }
    const type = spec.type;
    if ((type === "NodePort" || type === "LoadBalancer") && !spec.externalTrafficPolicy) {
      spec.externalTrafficPolicy = "Cluster";
    }
    if (type === "ClusterIP" || type === "NodePort" || type === "LoadBalancer") {
      spec.internalTrafficPolicy ??= "Cluster";
    }
    if (type === "LoadBalancer") spec.allocateLoadBalancerNodePorts ??= true;
  },
  validate(object, errors) {
    validateServicePorts(object as Service, errors);
    validateNodePorts(object as Service, errors);
  },
  validateUpdate(object, old, errors) {
    validateUpgradeDowngradeClusterIPs(object as Service, old as Service, errors);
    validateUpgradeDowngradeIPFamilies(object as Service, old as Service, errors);
  },
};

/**
 * Upstream's `validateUpgradeDowngradeClusterIPs`: outside ExternalName, the
 * IPs already held never change, the primary is never dropped, and the
 * secondary is dropped only by a SingleStack policy.
 */
function validateUpgradeDowngradeClusterIPs(service: Service, old: Service, errors: FieldErrors): void {
  const spec = service.spec;
  const oldSpec = old.spec;
  if (spec?.type === "ExternalName" || oldSpec?.type === "ExternalName") return;
  if (isHeadless(service) && isHeadless(old)) return;
  const ips = spec?.clusterIPs ?? [];
  const oldIPs = oldSpec?.clusterIPs ?? [];
  const shown = goStrings(spec?.clusterIPs);
  if (oldIPs.length === ips.length) {
    oldIPs.forEach((ip, i) => {
      if (ip !== ips[i]) errors.invalid(`spec.clusterIPs[${i}]`, shown, "may not change once set");
    });
  } else if (oldIPs.length > ips.length) {
    if (ips.length === 0) errors.invalid("spec.clusterIPs[0]", shown, "primary clusterIP can not be unset");
    if (oldIPs.length > 0 && ips.length > 0 && ips[0] !== oldIPs[0])
      errors.invalid("spec.clusterIPs[0]", shown, "may not change once set");
    if (ips.length === 1 && spec?.ipFamilyPolicy !== "SingleStack")
      errors.invalid(
        "spec.ipFamilyPolicy",
        spec?.ipFamilyPolicy ?? null,
        "must be set to 'SingleStack' when releasing the secondary clusterIP",
      );
  } else if (oldIPs.length > 0 && ips[0] !== oldIPs[0]) {
    errors.invalid("spec.clusterIPs[0]", shown, "may not change once set");
  }
}

/** Upstream's `validateUpgradeDowngradeIPFamilies`, the same rules for `ipFamilies` (headless Services may change theirs). */
function validateUpgradeDowngradeIPFamilies(service: Service, old: Service, errors: FieldErrors): void {
  const spec = service.spec;
  const oldSpec = old.spec;
  if (spec?.type === "ExternalName" || oldSpec?.type === "ExternalName") return;
  if (isHeadless(service) || isHeadless(old)) return;
  const families = spec?.ipFamilies ?? [];
  const oldFamilies = oldSpec?.ipFamilies ?? [];
  // Upstream names the IPs, not the families, as the value of some of these.
  const shownIPs = goStrings(spec?.clusterIPs);
  if (oldFamilies.length === families.length) {
    oldFamilies.forEach((family, i) => {
      if (family !== families[i])
        errors.invalid(
          "spec.ipFamilies[0]",
          goStrings(spec?.ipFamilies, "[]core.IPFamily"),
          "may not change once set",
        );
    });
  } else if (oldFamilies.length > families.length) {
    if ((spec?.clusterIPs ?? []).length === 0)
      errors.invalid(
        "spec.ipFamilies[0]",
        goStrings(spec?.ipFamilies, "[]core.IPFamily"),
        "primary ipFamily can not be unset",
      );
    if (families.length > 0 && families[0] !== oldFamilies[0])
      errors.invalid("spec.ipFamilies[0]", shownIPs, "may not change once set");
    if (families.length === 1 && spec?.ipFamilyPolicy !== "SingleStack")
      errors.invalid(
        "spec.ipFamilyPolicy",
        spec?.ipFamilyPolicy ?? null,
        "must be set to 'SingleStack' when releasing the secondary ipFamily",
      );
  } else if (oldFamilies.length > 0 && families.length > 0 && families[0] !== oldFamilies[0]) {
    errors.invalid("spec.ipFamilies[0]", shownIPs, "may not change once set");
  }
}

function isHeadless(service: Service): boolean {
  const ips = service.spec?.clusterIPs ?? [];
  return ips.length === 1 && ips[0] === "None";
}

/**
 * The node port rules of `ValidateService`: none on a ClusterIP Service, no
 * node port twice for one protocol, and a health check port only where one
 * is needed.
 */
function validateNodePorts(service: Service, errors: FieldErrors): void {
  const spec = service.spec;
  if (spec === undefined) return;
  const seen = new Set<string>();
  (spec.ports ?? []).forEach((port, index) => {
    if (!port.nodePort) return;
    if (spec.type === "ClusterIP")
      errors.forbidden(`spec.ports[${index}].nodePort`, "may not be used when `type` is 'ClusterIP'");
    const key = `${port.protocol ?? "TCP"}/${port.nodePort}`;
    if (seen.has(key)) errors.duplicate(`spec.ports[${index}].nodePort`, port.nodePort);
    seen.add(key);
  });
  if (!needsHealthCheckPort(service) && spec.healthCheckNodePort)
    errors.invalid(
      "spec.healthCheckNodePort",
      spec.healthCheckNodePort,
      "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
    );
}

/**
 * Fields that only one Service type uses, wiped when the type changes and
 * the client left them as they were (upstream's `dropTypeDependentFields`);
 * what they held is released by the write hooks.
 */
function dropTypeDependentFields(service: Service, old: Service): void {
  const spec = service.spec;
  const oldSpec = old.spec;
  if (spec === undefined || oldSpec === undefined) return;
  if (oldSpec.type !== "ExternalName" && spec.type === "ExternalName") {
    if (oldSpec.clusterIP === spec.clusterIP && sameStrings(oldSpec.clusterIPs, spec.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (sameStrings(oldSpec.ipFamilies, spec.ipFamilies)) delete spec.ipFamilies;
    if (oldSpec.ipFamilyPolicy === spec.ipFamilyPolicy) delete spec.ipFamilyPolicy;
  }
  if (needsNodePorts(old) && !needsNodePorts(service)) {
    const oldPorts = new Set((oldSpec.ports ?? []).map((p) => p.nodePort ?? 0));
    // Only when the client added no node port of its own.
    if ((spec.ports ?? []).every((p) => !p.nodePort || oldPorts.has(p.nodePort)))
      for (const port of spec.ports ?? []) delete port.nodePort;
  }
  if (
    needsHealthCheckPort(old) &&
    !needsHealthCheckPort(service) &&
    oldSpec.healthCheckNodePort === spec.healthCheckNodePort
  )
    delete spec.healthCheckNodePort;
  if (oldSpec.type === "LoadBalancer" && spec.type !== "LoadBalancer") {
    if (
      spec.allocateLoadBalancerNodePorts !== undefined &&
      spec.allocateLoadBalancerNodePorts === oldSpec.allocateLoadBalancerNodePorts
    )
      delete spec.allocateLoadBalancerNodePorts;
    if (spec.loadBalancerClass === oldSpec.loadBalancerClass) delete spec.loadBalancerClass;
  }
  if (
    needsNodePorts(old) &&
    !needsNodePorts(service) &&
    spec.externalTrafficPolicy === oldSpec.externalTrafficPolicy
  )
    delete spec.externalTrafficPolicy;
  // The load balancer's status means nothing once the Service is not one.
  if (spec.type !== "LoadBalancer" && service.status !== undefined) service.status.loadBalancer = {};
}

export const serviceDefinition = defineKind({
  descriptor: services,
  strategy: serviceStrategy,
  printer: servicePrinter,
  protobufMessage: "Service",
  writeHooks: serviceIPHooks,
});
