import { services } from "@reconcile/api";
import type { Service } from "kubernetes-types/core/v1.js";
import type { FieldErrors } from "../registry/field-errors.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import { servicePrinter } from "./printers/index.js";
import { initIPFamilyFields } from "./service-families.js";
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
  prepareForCreate(object) {
    initIPFamilyFields(object as Service);
  },
  prepareForUpdate(object, old) {
    const service = object as Service;
    normalizeClusterIPs(service, old as Service);
    dropTypeDependentFields(service, old as Service);
    initIPFamilyFields(service, old as Service);
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
    const spec = (object as Service).spec;
    const oldSpec = (old as Service).spec;
    if (spec?.type === "ExternalName" || oldSpec?.type === "ExternalName") return;
    // The primary cluster IP never changes (upstream's `validateUpgradeDowngradeClusterIPs`).
    const ip = spec?.clusterIPs?.[0];
    const oldIP = oldSpec?.clusterIPs?.[0];
    if (ip !== undefined && oldIP !== undefined && ip !== oldIP)
      errors.invalid("spec.clusterIPs[0]", ip, "may not change once set");
  },
};

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
 * `clusterIP` and `clusterIPs` kept in step on update (upstream's
 * `NormalizeClusterIPs`): a client that sends only the singular field gets
 * the plural from it, and one that clears the singular clears both.
 */
function normalizeClusterIPs(service: Service, old: Service): void {
  const spec = service.spec;
  const oldSpec = old.spec;
  if (spec === undefined || oldSpec === undefined) return;
  if ((oldSpec.clusterIPs ?? []).length > 0 && (spec.clusterIPs ?? []).length === 0) {
    if (oldSpec.clusterIP === spec.clusterIP && oldSpec.clusterIPs !== undefined)
      spec.clusterIPs = oldSpec.clusterIPs;
  }
  if (oldSpec.clusterIP === spec.clusterIP) return;
  const sameList = sameStrings(oldSpec.clusterIPs, spec.clusterIPs);
  if (oldSpec.clusterIP && !spec.clusterIP && sameList) delete spec.clusterIPs;
  else if (sameList && spec.clusterIP) spec.clusterIPs = [spec.clusterIP];
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

function sameStrings(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const left = a ?? [];
  const right = b ?? [];
  return left.length === right.length && left.every((value, index) => value === right[index]);
}

export const serviceDefinition = defineKind({
  descriptor: services,
  strategy: serviceStrategy,
  printer: servicePrinter,
  protobufMessage: "Service",
  writeHooks: serviceIPHooks,
});
