import {
  type DeepReadonly,
  errorMessage,
  milliValue,
  type Pod,
  type PodMetrics,
  parseSelector,
  podMetrics,
  type Scale,
  type Selector,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { ControllerIndexer, EventRecorder } from "@reconcile/controller";
import type { HorizontalPodAutoscaler, MetricSpec, MetricStatus } from "kubernetes-types/autoscaling/v2.js";
import type { ConditionUpdate } from "./normalize.js";
import {
  podMetricsInfo,
  type ReplicaCalculatorSettings,
  rawResourceReplicas,
  resourceReplicas,
} from "./replica-calculator.js";
import { milliText, setCondition } from "./status.js";

type HPA = HorizontalPodAutoscaler;

/** What {@link MetricReplicas} reads and where it reports. */
export interface MetricReplicasOptions {
  client: Client;
  recorder: EventRecorder;
  pods: ControllerIndexer<Pod>;
  settings: ReplicaCalculatorSettings;
}

/**
 * The replicas an autoscaler's metrics ask for (upstream horizontal.go's
 * `computeReplicasForMetrics` and the resource metrics client): each
 * Resource or ContainerResource metric read from `metrics.k8s.io` and run
 * through the replica calculator, with the status and condition each one reports.
 */
export class MetricReplicas {
  readonly #client: Client;
  readonly #recorder: EventRecorder;
  readonly #pods: ControllerIndexer<Pod>;
  readonly #settings: ReplicaCalculatorSettings;

  constructor(options: MetricReplicasOptions) {
    this.#client = options.client;
    this.#recorder = options.recorder;
    this.#pods = options.pods;
    this.#settings = options.settings;
  }

  /**
   * The most replicas any metric asks for (upstream `computeReplicasForMetrics`):
   * -1 with an error when every metric failed, or some did and the rest would scale down.
   */
  async computeReplicasForMetrics(
    hpa: HPA,
    scale: Scale,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<{ replicas: number; metric: string; statuses: MetricStatus[]; error?: unknown }> {
    const specs = hpa.spec?.metrics ?? [];
    const statuses: MetricStatus[] = specs.map(() => ({ type: "" }) as MetricStatus);
    const selectorText = scale.status?.selector ?? "";
    let selector: Selector;
    try {
      if (!selectorText) throw new Error("selector is required");
      selector = parseSelector(selectorText);
    } catch (error) {
      const missing = !selectorText;
      const message = missing
        ? "selector is required"
        : `couldn't convert selector into a corresponding internal selector object: ${errorMessage(error)}`;
      this.#recorder.event(hpa, "Warning", missing ? "SelectorRequired" : "InvalidSelector", message);
      setCondition(hpa, now, {
        type: "ScalingActive",
        status: "False",
        reason: "InvalidSelector",
        message: missing ? "the HPA target's scale is missing a selector" : message,
      });
      return { replicas: 0, metric: "", statuses: [], error: new Error(message) };
    }
    const specReplicas = scale.spec?.replicas ?? 0;
    let replicas = 0;
    let metric = "";
    let invalid = 0;
    let firstError: unknown;
    let firstCondition: ConditionUpdate | undefined;
    for (const [i, spec] of specs.entries()) {
      try {
        const proposal = await this.#computeReplicasForMetric(
          hpa,
          spec,
          specReplicas,
          selector,
          selectorText,
          now,
          signal,
        );
        statuses[i] = proposal.status;
        if (replicas === 0 || proposal.replicas > replicas) {
          replicas = proposal.replicas;
          metric = proposal.metric;
        }
      } catch (error) {
        if (invalid === 0) {
          firstError = error;
          firstCondition = {
            type: "ScalingActive",
            status: "False",
            reason: (error as { reason?: string }).reason ?? "FailedGetResourceMetric",
            message: `the HPA was unable to compute the replica count: ${errorMessage(error)}`,
          };
        }
        invalid++;
      }
    }
    const error =
      firstError === undefined
        ? undefined
        : new Error(
            `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${errorMessage(firstError)}`,
          );
    if (invalid >= specs.length || (invalid > 0 && replicas < specReplicas)) {
      if (firstCondition !== undefined) setCondition(hpa, now, firstCondition);
      return { replicas: -1, metric: "", statuses, error };
    }
    setCondition(hpa, now, {
      type: "ScalingActive",
      status: "True",
      reason: "ValidMetricFound",
      message: `the HPA was able to successfully calculate a replica count from ${metric}`,
    });
    return { replicas, metric, statuses, ...(error !== undefined ? { error } : {}) };
  }

  /** One metric's proposal (upstream `computeReplicasForMetric`): Resource and ContainerResource metrics. */
  async #computeReplicasForMetric(
    hpa: HPA,
    spec: MetricSpec,
    current: number,
    selector: Selector,
    selectorText: string,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<{ replicas: number; metric: string; status: MetricStatus }> {
    const source =
      spec.type === "Resource"
        ? spec.resource
        : spec.type === "ContainerResource"
          ? spec.containerResource
          : undefined;
    if (source === undefined) {
      const failure = new Error(
        `unable to get metric ${spec.type}: the ${spec.type} metric source needs the custom or external metrics API, which this cluster does not serve`,
      );
      this.#recorder.event(hpa, "Warning", `FailedGet${spec.type}Metric`, failure.message);
      throw Object.assign(failure, { reason: `FailedGet${spec.type}Metric` });
    }
    const container = spec.type === "ContainerResource" ? spec.containerResource?.container : undefined;
    const name = source.name;
    const fail = (error: unknown, what: string): never => {
      const reason =
        spec.type === "ContainerResource" ? "FailedGetContainerResourceMetric" : "FailedGetResourceMetric";
      const failure = new Error(`failed to get ${name} ${what}: ${errorMessage(error)}`);
      this.#recorder.event(hpa, "Warning", reason, failure.message);
      throw Object.assign(failure, { reason });
    };
    const namespace = hpa.metadata?.namespace ?? "";
    const podList = this.#pods
      .byIndex("namespace", namespace)
      .filter((pod) => selector.matches(pod.metadata?.labels));
    const statusKey = spec.type === "ContainerResource" ? "containerResource" : "resource";
    const identity = container === undefined ? { name } : { name, container };
    if (source.target.averageValue !== undefined) {
      let result: ReturnType<typeof rawResourceReplicas>;
      try {
        const target = milliValue(source.target.averageValue);
        const metrics = await this.#fetchMetrics(namespace, selectorText, name, container, signal);
        result = rawResourceReplicas(current, target, name, metrics, podList, this.#settings, now);
      } catch (error) {
        return fail(error, "usage");
      }
      return {
        replicas: result.replicas,
        metric: `${name} resource`,
        status: {
          type: spec.type,
          [statusKey]: { ...identity, current: { averageValue: milliText(result.rawAverage) } },
        } as MetricStatus,
      };
    }
    if (source.target.averageUtilization === undefined) {
      return fail(
        new Error(
          "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set",
        ),
        "utilization",
      );
    }
    let result: ReturnType<typeof resourceReplicas>;
    try {
      const metrics = await this.#fetchMetrics(namespace, selectorText, name, container, signal);
      result = resourceReplicas(
        current,
        source.target.averageUtilization,
        name,
        container,
        metrics,
        podList,
        this.#settings,
        now,
      );
    } catch (error) {
      return fail(error, "utilization");
    }
    return {
      replicas: result.replicas,
      metric:
        container === undefined
          ? `${name} resource utilization (percentage of request)`
          : `${name} container resource utilization (percentage of request)`,
      status: {
        type: spec.type,
        [statusKey]: {
          ...identity,
          current: { averageUtilization: result.utilization, averageValue: milliText(result.rawAverage) },
        },
      } as MetricStatus,
    };
  }

  /** The pods' usage of `resource` from the resource metrics API (upstream's resource metrics client). */
  async #fetchMetrics(
    namespace: string,
    selector: string,
    resource: string,
    container: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ReturnType<typeof podMetricsInfo>> {
    let items: DeepReadonly<PodMetrics>[];
    try {
      items = (await this.#client.resource(podMetrics, namespace).list({ labelSelector: selector, signal }))
        .items;
    } catch (error) {
      throw new Error(
        `unable to get metrics for resource ${resource}: unable to fetch metrics from resource metrics API: ${errorMessage(error)}`,
      );
    }
    if (items.length === 0)
      throw new Error(
        `unable to get metrics for resource ${resource}: no metrics returned from resource metrics API`,
      );
    return podMetricsInfo(items, resource, container);
  }
}
