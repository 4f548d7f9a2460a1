import {
  type DeepReadonly,
  errorMessage,
  horizontalPodAutoscalers,
  metaNamespaceKeyFunc,
  milliValue,
  type Pod,
  type PodMetrics,
  parseSelector,
  podMetrics,
  pods,
  type ResourceDescriptor,
  type RunOptions,
  rfc3339,
  type Scale,
  type Selector,
} from "@reconcile/api";
import { type Client, discoveryFromClient, type ResourceDiscovery } from "@reconcile/client";
import {
  type ControllerContext,
  type ControllerHarness,
  type ControllerInformer,
  defineController,
  objectFromTombstone,
  type SyncContext,
  type SyncResult,
} from "@reconcile/controller";
import type {
  HorizontalPodAutoscaler,
  HorizontalPodAutoscalerCondition,
  HorizontalPodAutoscalerStatus,
  MetricSpec,
  MetricStatus,
} from "kubernetes-types/autoscaling/v2.js";
import { boundsWithBehavior, boundsWithRules, type ConditionUpdate, ScalingHistory } from "./normalize.js";
import {
  defaultReplicaCalculatorSettings,
  podMetricsInfo,
  type ReplicaCalculatorSettings,
  rawResourceReplicas,
  resourceReplicas,
} from "./replica-calculator.js";

type HPA = HorizontalPodAutoscaler;

export interface HorizontalControllerOptions extends ControllerContext {
  /** Reads scales, pods' metrics and discovery; writes scales, HPA status and Events. Required. */
  client: Client;
  hpaInformer: ControllerInformer<HPA>;
  podInformer: ControllerInformer<Pod>;
  /** `--horizontal-pod-autoscaler-sync-period`: how often each autoscaler is looked at. Default 15 s. */
  syncPeriodMs?: number | undefined;
  /** `--horizontal-pod-autoscaler-downscale-stabilization` for autoscalers without a behavior. Default 5 min. */
  downscaleStabilizationMs?: number | undefined;
  /** Tolerance and readiness settings of the replica calculation. Default: upstream's. */
  calculator?: Partial<ReplicaCalculatorSettings> | undefined;
  /** Where the scale targets' resources are found. Default: discovery through `client`. */
  discovery?: ResourceDiscovery | undefined;
}

/**
 * The HorizontalPodAutoscaler controller (upstream
 * `pkg/controller/podautoscaler`): every sync period, reads the target's
 * scale, computes the replicas each Resource or ContainerResource metric
 * asks for from the resource metrics API (`metrics.k8s.io`) against the
 * pods' requests, takes the highest, stabilizes it over recent
 * recommendations, bounds it by min/max and the scaling policies, writes the
 * scale, and reports it all in the status: current metrics and the
 * AbleToScale, ScalingActive and ScalingLimited conditions.
 */
export class HorizontalController {
  readonly #harness: ControllerHarness<string>;
  readonly #client: Client;
  readonly #hpaInformer: ControllerInformer<HPA>;
  readonly #podInformer: ControllerInformer<Pod>;
  readonly #syncPeriodMs: number;
  readonly #downscaleStabilizationMs: number;
  readonly #settings: ReplicaCalculatorSettings;
  readonly #discover: ResourceDiscovery;
  readonly #history = new ScalingHistory();
  #resources: Map<string, ResourceDescriptor> | undefined;

  constructor(options: HorizontalControllerOptions) {
    const { client, hpaInformer, podInformer } = options ?? {};
    const syncPeriodMs = options?.syncPeriodMs ?? 15_000;
    this.#harness = defineController({
      name: "horizontalpodautoscaler",
      owner: "HorizontalController",
      context: options,
      required: { client, hpaInformer, podInformer },
      events: { component: "horizontal-pod-autoscaler", client },
      informers: { horizontalpodautoscalers: hpaInformer, pods: podInformer },
      queues: [
        {
          name: "horizontalpodautoscaler",
          workers: 5,
          sync: (key, context) => this.sync(key, context),
          // A failed look comes back after the sync period like any other (upstream's
          // FixedItemIntervalRateLimiter): a missing metric is not retried in a hot loop.
          rateLimiter: () => ({ when: () => syncPeriodMs, forget: () => {}, numRequeues: () => 0 }),
        },
      ],
    });
    [this.#client, this.#hpaInformer, this.#podInformer] = [client, hpaInformer, podInformer];
    this.#syncPeriodMs = syncPeriodMs;
    this.#downscaleStabilizationMs = options.downscaleStabilizationMs ?? 5 * 60_000;
    this.#settings = { ...defaultReplicaCalculatorSettings, ...options.calculator };
    this.#discover = options.discovery ?? discoveryFromClient(client);
    this.#hpaInformer.addEventHandler({
      onAdd: (hpa) => this.#harness.enqueue(metaNamespaceKeyFunc(hpa), "HorizontalPodAutoscaler added"),
      onUpdate: (old, hpa) => {
        // Its own status writes need no look: the sync period brings the next one.
        if (JSON.stringify(old.spec) !== JSON.stringify(hpa.spec))
          this.#harness.enqueue(metaNamespaceKeyFunc(hpa), "HorizontalPodAutoscaler updated");
      },
      onDelete: (obj) => {
        const hpa = objectFromTombstone(obj);
        if (hpa?.metadata !== undefined) this.#history.forget(metaNamespaceKeyFunc(hpa));
      },
    });
  }

  static fromInformerFactory(
    factory: {
      forResource(resource: typeof horizontalPodAutoscalers): ControllerInformer<HPA>;
      forResource(resource: typeof pods): ControllerInformer<Pod>;
    },
    options: Omit<HorizontalControllerOptions, "hpaInformer" | "podInformer">,
  ): HorizontalController {
    return new HorizontalController({
      ...options,
      hpaInformer: factory.forResource(horizontalPodAutoscalers),
      podInformer: factory.forResource(pods),
    });
  }

  /** Waits for the caches, then runs the workers until `signal` aborts. */
  run(options: RunOptions & { workers?: number | undefined }): Promise<void> {
    return this.#harness.run(options);
  }

  /** One look at an autoscaler (upstream `reconcileKey`), then again after the sync period. */
  async sync(key: string, context: Partial<SyncContext> = {}): Promise<SyncResult> {
    const cached = this.#hpaInformer.getIndexer().getByKey(key);
    if (cached === undefined) {
      this.#history.forget(key);
      return;
    }
    await this.#reconcile(key, structuredClone(cached) as HPA, context.signal);
    return { requeueAfterMs: this.#syncPeriodMs };
  }

  async #reconcile(key: string, hpa: HPA, signal: AbortSignal | undefined): Promise<void> {
    const original = structuredClone(hpa.status ?? {}) as HorizontalPodAutoscalerStatus;
    const now = this.#harness.clock.now();
    const ref = hpa.spec?.scaleTargetRef;
    const namespace = hpa.metadata?.namespace ?? "";
    const reference = `${ref?.kind}/${namespace}/${ref?.name}`;
    let resource: ResourceDescriptor;
    let scale: Scale;
    try {
      resource = await this.#resourceFor(ref?.apiVersion ?? "", ref?.kind ?? "", signal);
      scale = await this.#client.resource(resource, namespace).getScale(ref?.name ?? "", { signal });
    } catch (error) {
      this.#harness.recorder.event(hpa, "Warning", "FailedGetScale", errorMessage(error));
      setCondition(hpa, now, {
        type: "AbleToScale",
        status: "False",
        reason: "FailedGetScale",
        message: `the HPA controller was unable to get the target's current scale: ${errorMessage(error)}`,
      });
      await this.#writeStatus(hpa, original, signal);
      throw new Error(`failed to query scale subresource for ${reference}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    setCondition(hpa, now, {
      type: "AbleToScale",
      status: "True",
      reason: "SucceededGetScale",
      message: "the HPA controller was able to get the target's current scale",
    });
    const current = scale.spec?.replicas ?? 0;
    this.#history.recordInitial(key, current, now);
    const min = hpa.spec?.minReplicas ?? 1;
    const max = hpa.spec?.maxReplicas ?? 0;
    let desired = 0;
    let reason = "";
    let rescale = true;
    let statuses: MetricStatus[] = hpa.status?.currentMetrics ?? [];
    let deferred: unknown;
    if (current === 0 && min !== 0) {
      desired = 0;
      rescale = false;
      setCondition(hpa, now, {
        type: "ScalingActive",
        status: "False",
        reason: "ScalingDisabled",
        message: "scaling is disabled since the replica count of the target is zero",
      });
    } else if (current > max) {
      reason = "Current number of replicas above Spec.MaxReplicas";
      desired = max;
    } else if (current < min) {
      reason = "Current number of replicas below Spec.MinReplicas";
      desired = min;
    } else {
      const computed = await this.#computeReplicasForMetrics(hpa, scale, now, signal);
      statuses = computed.statuses;
      if (computed.error !== undefined && computed.replicas === -1) {
        setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, statuses, false, now);
        await this.#writeStatus(hpa, original, signal);
        this.#harness.recorder.event(
          hpa,
          "Warning",
          "FailedComputeMetricsReplicas",
          errorMessage(computed.error),
        );
        throw new Error(
          `failed to compute desired number of replicas based on listed metrics for ${reference}: ${errorMessage(computed.error)}`,
        );
      }
      deferred = computed.error;
      desired = Math.max(0, computed.replicas);
      if (desired > current) reason = `${computed.metric} above target`;
      if (desired < current) reason = "All metrics below target";
      desired = this.#normalize(key, hpa, current, desired, min, now);
      rescale = desired !== current;
    }
    if (rescale) {
      try {
        await this.#client
          .resource(resource, namespace)
          .updateScale(ref?.name ?? "", { ...scale, spec: { ...scale.spec, replicas: desired } }, { signal });
      } catch (error) {
        this.#harness.recorder.event(
          hpa,
          "Warning",
          "FailedRescale",
          `New size: ${desired}; reason: ${reason}; error: ${errorMessage(error)}`,
        );
        setCondition(hpa, now, {
          type: "AbleToScale",
          status: "False",
          reason: "FailedUpdateScale",
          message: `the HPA controller was unable to update the target scale: ${errorMessage(error)}`,
        });
        setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, statuses, false, now);
        await this.#writeStatus(hpa, original, signal).catch(() => {});
        throw new Error(`failed to rescale ${reference}: ${errorMessage(error)}`, { cause: error });
      }
      setCondition(hpa, now, {
        type: "AbleToScale",
        status: "True",
        reason: "SucceededRescale",
        message: `the HPA controller was able to update the target scale to ${desired}`,
      });
      this.#harness.recorder.event(
        hpa,
        "Normal",
        "SuccessfulRescale",
        `New size: ${desired}; reason: ${reason}`,
      );
      const behavior = hpa.spec?.behavior;
      if (behavior?.scaleUp !== undefined && behavior.scaleDown !== undefined)
        this.#history.storeScaleEvent(
          key,
          { up: behavior.scaleUp, down: behavior.scaleDown },
          current,
          desired,
          now,
        );
    } else {
      desired = current;
    }
    setStatus(hpa, current, desired, statuses, rescale, now);
    await this.#writeStatus(hpa, original, signal);
    if (deferred !== undefined) throw deferred;
  }

  /**
   * The most replicas any metric asks for (upstream `computeReplicasForMetrics`):
   * -1 with an error when every metric failed, or some did and the rest would scale down.
   */
  async #computeReplicasForMetrics(
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
      this.#harness.recorder.event(hpa, "Warning", missing ? "SelectorRequired" : "InvalidSelector", message);
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
      this.#harness.recorder.event(hpa, "Warning", `FailedGet${spec.type}Metric`, failure.message);
      throw Object.assign(failure, { reason: `FailedGet${spec.type}Metric` });
    }
    const container = spec.type === "ContainerResource" ? spec.containerResource?.container : undefined;
    const name = source.name;
    const fail = (error: unknown, what: string): never => {
      const reason =
        spec.type === "ContainerResource" ? "FailedGetContainerResourceMetric" : "FailedGetResourceMetric";
      const failure = new Error(`failed to get ${name} ${what}: ${errorMessage(error)}`);
      this.#harness.recorder.event(hpa, "Warning", reason, failure.message);
      throw Object.assign(failure, { reason });
    };
    const namespace = hpa.metadata?.namespace ?? "";
    const podList = this.#podInformer
      .getIndexer()
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

  /** Stabilization, then the bounds (upstream `normalizeDesiredReplicas` / `…WithBehaviors`). */
  #normalize(key: string, hpa: HPA, current: number, desired: number, min: number, now: number): number {
    const max = hpa.spec?.maxReplicas ?? 0;
    const behavior = hpa.spec?.behavior;
    let stabilized: number;
    let bounded: { replicas: number; reason: string; message: string };
    if (behavior === undefined) {
      stabilized = this.#history.stabilize(key, desired, this.#downscaleStabilizationMs, now);
      setCondition(
        hpa,
        now,
        stabilized !== desired
          ? {
              type: "AbleToScale",
              status: "True",
              reason: "ScaleDownStabilized",
              message:
                "recent recommendations were higher than current one, applying the highest recent recommendation",
            }
          : {
              type: "AbleToScale",
              status: "True",
              reason: "ReadyForNewScale",
              message: "recommended size matches current size",
            },
      );
      bounded = boundsWithRules(current, stabilized, min, max);
    } else {
      const up = behavior.scaleUp ?? {};
      const down = { ...behavior.scaleDown };
      down.stabilizationWindowSeconds ??= Math.round(this.#downscaleStabilizationMs / 1000);
      const result = this.#history.stabilizeWithBehaviors(
        key,
        current,
        desired,
        (up.stabilizationWindowSeconds ?? 0) * 1000,
        down.stabilizationWindowSeconds * 1000,
        now,
      );
      stabilized = result.replicas;
      setCondition(
        hpa,
        now,
        stabilized !== desired
          ? { type: "AbleToScale", status: "True", reason: result.reason, message: result.message }
          : {
              type: "AbleToScale",
              status: "True",
              reason: "ReadyForNewScale",
              message: "recommended size matches current size",
            },
      );
      bounded = boundsWithBehavior(
        this.#history,
        key,
        { current, desired: stabilized, min, max, up, down },
        now,
      );
    }
    setCondition(hpa, now, {
      type: "ScalingLimited",
      status: bounded.replicas === stabilized ? "False" : "True",
      reason: bounded.reason,
      message: bounded.message,
    });
    return bounded.replicas;
  }

  /** The served resource of a scale target's kind, from discovery (refreshed when a kind is unknown). */
  async #resourceFor(
    apiVersion: string,
    kind: string,
    signal: AbortSignal | undefined,
  ): Promise<ResourceDescriptor> {
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
    const key = `${group}/${kind}`;
    let found = this.#resources?.get(key);
    if (found === undefined) {
      const discovered = await this.#discover(signal);
      this.#resources = new Map(
        discovered.resources.map((r) => [`${r.resource.group}/${r.resource.kind}`, r.resource]),
      );
      found = this.#resources.get(key);
    }
    if (found === undefined) throw new Error(`no matches for kind "${kind}" in group "${group}"`);
    return found;
  }

  /** Writes the status if it changed (upstream `updateStatusIfNeeded`). */
  async #writeStatus(
    hpa: HPA,
    original: HorizontalPodAutoscalerStatus,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (JSON.stringify(original) === JSON.stringify(hpa.status ?? {})) return;
    try {
      await this.#client
        .resource(horizontalPodAutoscalers, hpa.metadata?.namespace ?? "")
        .updateStatus(hpa, { signal });
    } catch (error) {
      this.#harness.recorder.event(hpa, "Warning", "FailedUpdateStatus", errorMessage(error));
      throw new Error(`failed to update status for ${hpa.metadata?.name}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
  }
}

/** Sets a condition, keeping its transition time when its status did not change (upstream `setConditionInList`). */
export function setCondition(hpa: HPA, now: number, update: ConditionUpdate): void {
  const status = (hpa.status ??= { desiredReplicas: 0 });
  const conditions = (status.conditions ??= []);
  const existing = conditions.find((c) => c.type === update.type);
  if (existing === undefined) {
    conditions.push({ ...update, lastTransitionTime: rfc3339(now) } as HorizontalPodAutoscalerCondition);
    return;
  }
  if (existing.status !== update.status) existing.lastTransitionTime = rfc3339(now);
  existing.status = update.status;
  if (update.reason !== undefined) existing.reason = update.reason;
  if (update.message !== undefined) existing.message = update.message;
}

/** The status after a look (upstream `setStatus`): replicas, metrics, conditions, and the scale time on a rescale. */
function setStatus(
  hpa: HPA,
  current: number,
  desired: number,
  metrics: MetricStatus[],
  rescale: boolean,
  now: number,
): void {
  const previous = hpa.status;
  hpa.status = {
    currentReplicas: current,
    desiredReplicas: desired,
    ...(rescale
      ? { lastScaleTime: rfc3339(now) }
      : previous?.lastScaleTime !== undefined
        ? { lastScaleTime: previous.lastScaleTime }
        : {}),
    ...(metrics.length > 0 ? { currentMetrics: metrics } : {}),
    ...(previous?.conditions !== undefined ? { conditions: previous.conditions } : {}),
  };
}

function milliText(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
