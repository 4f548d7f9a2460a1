import {
  errorMessage,
  horizontalPodAutoscalers,
  jsonEqual,
  metaNamespaceKeyFunc,
  type Pod,
  pods,
  type ResourceDescriptor,
  type RunOptions,
  type Scale,
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
  HorizontalPodAutoscalerStatus,
  MetricStatus,
} from "kubernetes-types/autoscaling/v2.js";
import { MetricReplicas } from "./metric-replicas.js";
import { boundsWithBehavior, boundsWithRules, ScalingHistory } from "./normalize.js";
import { defaultReplicaCalculatorSettings, type ReplicaCalculatorSettings } from "./replica-calculator.js";
import { setCondition, setStatus } from "./status.js";

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
  readonly #metricReplicas: MetricReplicas;
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
    this.#metricReplicas = new MetricReplicas({
      client,
      recorder: this.#harness.recorder,
      pods: podInformer.getIndexer(),
      settings: this.#settings,
    });
    this.#hpaInformer.addEventHandler({
      onAdd: (hpa) => this.#harness.enqueue(metaNamespaceKeyFunc(hpa), "HorizontalPodAutoscaler added"),
      onUpdate: (old, hpa) => {
        // Its own status writes need no look: the sync period brings the next one.
        if (!jsonEqual(old.spec, hpa.spec))
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
      const computed = await this.#metricReplicas.computeReplicasForMetrics(hpa, scale, now, signal);
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
        setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, statuses, false, now);
        return this.#rescaleFailed(
          hpa,
          original,
          `New size: ${desired}; reason: ${reason}`,
          reference,
          error,
          signal,
        );
      }
      this.#rescaled(key, hpa, current, desired, reason, now);
    } else {
      desired = current;
    }
    setStatus(hpa, current, desired, statuses, rescale, now);
    await this.#writeStatus(hpa, original, signal);
    if (deferred !== undefined) throw deferred;
  }

  /** Reports a scale written (upstream's SucceededRescale condition and SuccessfulRescale event), and remembers it for the policies. */
  #rescaled(key: string, hpa: HPA, current: number, desired: number, reason: string, now: number): void {
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
  }

  /** Reports a failed scale write (upstream's FailedRescale event and FailedUpdateScale condition). */
  async #rescaleFailed(
    hpa: HPA,
    original: HorizontalPodAutoscalerStatus,
    what: string,
    reference: string,
    error: unknown,
    signal: AbortSignal | undefined,
  ): Promise<never> {
    this.#harness.recorder.event(hpa, "Warning", "FailedRescale", `${what}; error: ${errorMessage(error)}`);
    setCondition(hpa, this.#harness.clock.now(), {
      type: "AbleToScale",
      status: "False",
      reason: "FailedUpdateScale",
      message: `the HPA controller was unable to update the target scale: ${errorMessage(error)}`,
    });
    await this.#writeStatus(hpa, original, signal).catch(() => {});
    throw new Error(`failed to rescale ${reference}: ${errorMessage(error)}`, { cause: error });
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
    if (jsonEqual(original, hpa.status ?? {})) return;
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
