import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isValidPortName,
  isValidPortNum,
  type Service,
} from "@reconcile/api";
import type { FieldErrors } from "../registry/field-errors.js";
import { goNil, goStruct } from "../registry/go-syntax.js";
import { intOrStringValue } from "./int-or-percent.js";

// The type, external name and port checks of upstream's `ValidateService`
// (`validateServicePort` and the duplicate check over protocol and port).

const protocols = ["SCTP", "TCP", "UDP"];
const serviceTypes = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

/**
 * A Service's ports: at least one unless it is headless or an ExternalName,
 * each named (a DNS label, unique) when there are several, a port number, a
 * supported protocol, a target port number or name; no protocol and port twice.
 */
export function validateServicePorts(service: Service, errors: FieldErrors): void {
  const spec = service.spec;
  if (spec === undefined) return;
  if (spec.type !== undefined && !serviceTypes.includes(spec.type))
    errors.notSupported("spec.type", spec.type, serviceTypes);
  if (
    spec.sessionAffinity !== undefined &&
    spec.sessionAffinity !== "ClientIP" &&
    spec.sessionAffinity !== "None"
  )
    errors.notSupported("spec.sessionAffinity", spec.sessionAffinity, ["ClientIP", "None"]);
  if (spec.type === "ExternalName") {
    // A CNAME, which may end with a dot to say it is fully qualified.
    const cname = (spec.externalName ?? "").replace(/\.$/, "");
    if (cname === "") errors.required("spec.externalName");
    else for (const problem of isDNS1123Subdomain(cname)) errors.invalid("spec.externalName", cname, problem);
  }
  const ports = spec.ports ?? [];
  if (ports.length === 0 && spec.clusterIP !== "None" && spec.type !== "ExternalName")
    errors.required("spec.ports");
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const at = `spec.ports[${i}]`;
    if (ports.length > 1 && !port.name) errors.required(`${at}.name`);
    else if (port.name) {
      for (const problem of isDNS1123Label(port.name)) errors.invalid(`${at}.name`, port.name, problem);
      if (names.has(port.name)) errors.duplicate(`${at}.name`, port.name);
      names.add(port.name);
    }
    for (const problem of isValidPortNum(port.port)) errors.invalid(`${at}.port`, port.port, problem);
    if (!port.protocol) errors.required(`${at}.protocol`);
    else if (!protocols.includes(port.protocol))
      errors.notSupported(`${at}.protocol`, port.protocol, protocols);
    const target = port.targetPort;
    if (typeof target === "number")
      for (const problem of isValidPortNum(target)) errors.invalid(`${at}.targetPort`, target, problem);
    else if (typeof target === "string")
      for (const problem of isValidPortName(target)) errors.invalid(`${at}.targetPort`, target, problem);
  });
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const key = `${port.protocol}/${port.port}`;
    if (seen.has(key))
      errors.duplicate(
        `spec.ports[${i}]`,
        goStruct("core.ServicePort", [
          ["Name", ""],
          ["Protocol", port.protocol ?? ""],
          ["AppProtocol", goNil("*string")],
          ["Port", port.port],
          ["TargetPort", intOrStringValue(0)],
          ["NodePort", 0],
        ]),
      );
    seen.add(key);
  });
}
