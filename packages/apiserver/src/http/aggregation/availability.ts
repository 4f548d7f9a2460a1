import type { APIService } from "@reconcile/api";
import type { Endpoints, Service } from "kubernetes-types/core/v1.js";

// kube-aggregator's remote availability controller (v1.32): whether an
// APIService served by a Service can be reached, in its condition texts.

/** An APIService's `Available` condition, without its transition time. */
export interface AvailableVerdict {
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
}

export type APIServiceCondition = NonNullable<NonNullable<APIService["status"]>["conditions"]>[number];

/** The verdict that all checks passed. */
export const passed: AvailableVerdict = { status: "True", reason: "Passed", message: "all checks passed" };

/**
 * What the Service and its Endpoints say of an APIService before its server
 * is asked: a verdict of `False` when the Service is missing, does not listen
 * on the port, or has no address behind the port; `undefined` when the server
 * is to be asked. ClusterIP Services are checked this far; other types go
 * straight to the server, as upstream does.
 */
export function serviceVerdict(
  apiService: APIService,
  service: Service | undefined,
  endpoints: Endpoints | undefined,
): AvailableVerdict | undefined {
  const ref = apiService.spec?.service ?? {};
  const where = `service/${ref.name ?? ""} in ${JSON.stringify(ref.namespace ?? "")}`;
  if (service === undefined)
    return { status: "False", reason: "ServiceNotFound", message: `${where} is not present` };
  if ((service.spec?.type ?? "ClusterIP") !== "ClusterIP") return undefined;
  const port = ref.port ?? 443;
  const servicePort = (service.spec?.ports ?? []).find((p) => p.port === port);
  if (servicePort === undefined)
    return {
      status: "False",
      reason: "ServicePortError",
      message: `${where} is not listening on port ${port}`,
    };
  if (endpoints === undefined)
    return {
      status: "False",
      reason: "EndpointsNotFound",
      message: `cannot find endpoints for ${where}`,
    };
  const portName = servicePort.name ?? "";
  const active = (endpoints.subsets ?? []).some(
    (subset) =>
      (subset.addresses ?? []).length > 0 && (subset.ports ?? []).some((p) => (p.name ?? "") === portName),
  );
  if (!active)
    return {
      status: "False",
      reason: "MissingEndpoints",
      message: `endpoints for ${where} have no addresses with port name ${JSON.stringify(portName)}`,
    };
  return undefined;
}

/** The verdict of the discovery check on `url` that ended with `failure` (undefined: it answered 2xx). */
export function discoveryVerdict(url: string, failure: string | undefined): AvailableVerdict {
  if (failure === undefined) return passed;
  return {
    status: "False",
    reason: "FailedDiscoveryCheck",
    message: `failing or missing response from ${url}: ${failure}`,
  };
}

/** How many discovery checks kube-aggregator makes at once, each on an address drawn afresh. */
export const discoveryAttempts = 5;

/**
 * upstream's discovery check: `attempts` tries at once; the first to pass
 * wins, else the failure that came last. Rejects only when a try throws
 * before any result is settled.
 */
export function firstPassing<T>(
  attempts: number,
  attempt: () => Promise<T>,
  passes: (result: T) => boolean,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let left = attempts;
    let settled = false;
    for (let i = 0; i < attempts; i++) {
      attempt().then(
        (result) => {
          if (settled) return;
          left--;
          if (!passes(result) && left > 0) return;
          settled = true;
          resolve(result);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          reject(error);
        },
      );
    }
  });
}

/**
 * The conditions with `Available` set to `verdict` (upstream's
 * `SetAPIServiceCondition`): its transition time moves only when its status
 * changes; reason and message are replaced.
 */
export function withAvailable(
  conditions: readonly APIServiceCondition[],
  verdict: AvailableVerdict,
  now: string,
): APIServiceCondition[] {
  const existing = conditions.find((c) => c.type === "Available");
  if (existing === undefined)
    return [...conditions, { type: "Available", ...verdict, lastTransitionTime: now }];
  return conditions.map((c) =>
    c !== existing
      ? c
      : {
          ...c,
          status: verdict.status,
          lastTransitionTime: c.status === verdict.status ? (c.lastTransitionTime ?? now) : now,
          reason: verdict.reason,
          message: verdict.message,
        },
  );
}

/** Whether an APIService is marked Available. */
export function isAvailable(apiService: APIService): boolean {
  return apiService.status?.conditions?.some((c) => c.type === "Available" && c.status === "True") ?? false;
}
