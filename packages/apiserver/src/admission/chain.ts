import type { Admission, AdmissionAttributes } from "../registry/admission.js";
import { type AdmissionPlugin, resourceKey } from "./plugin.js";

interface Phases {
  readonly mutating: readonly AdmissionPlugin[];
  readonly validating: readonly AdmissionPlugin[];
}

/** A phase of the chain, as kube-apiserver's admission metrics name it. */
export type AdmissionStep = "admit" | "validate";

/**
 * What the chain reports when observed, for the API server's metrics (the
 * stable `apiserver_admission_controller_admission_duration_seconds` and
 * `apiserver_admission_step_admission_duration_seconds` of kube-apiserver).
 */
export interface AdmissionObserver {
  /** One plugin's phase of one write: the plugin, the operation, whether it refused, how long it took. */
  admissionController(
    name: string,
    operation: string,
    rejected: boolean,
    type: AdmissionStep,
    seconds: number,
  ): void;
  /** One whole phase of one write. */
  admissionStep(operation: string, rejected: boolean, type: AdmissionStep, seconds: number): void;
}

/**
 * Plugins in order, mutating then validating (kube-apiserver's admission
 * chain): every write's object passes each plugin's `admit` in turn, then,
 * once the kind has prepared and validated it, each plugin's `validate`. Per
 * resource the chain keeps only the plugins that handle it, so a write of a
 * kind no plugin knows pays one map lookup. The chain runs within the call
 * until a plugin answers with a promise, and waits only from there. With an
 * `observer`, each plugin's phase and each whole phase are timed.
 */
export class AdmissionChain implements Admission {
  readonly plugins: readonly AdmissionPlugin[];
  /**
   * Where the timings go; undefined (the default): nothing is timed. Plugins
   * are timed one by one only for an observer with `admissionController`.
   */
  observer: Partial<AdmissionObserver> | undefined;
  readonly #byResource = new Map<string, Phases>();

  constructor(plugins: readonly AdmissionPlugin[]) {
    this.plugins = plugins;
  }

  mutate(attributes: AdmissionAttributes): boolean | Promise<boolean> {
    return this.#run(attributes, "admit", this.#phases(attributes).mutating);
  }

  validate(attributes: AdmissionAttributes): void | Promise<void> {
    const done = this.#run(attributes, "validate", this.#phases(attributes).validating);
    if (done instanceof Promise) return done.then(nothing);
  }

  /** Runs `plugins`' `step` over `attributes`; true when a plugin says the object must be defaulted again. */
  #run(
    attributes: AdmissionAttributes,
    step: AdmissionStep,
    plugins: readonly AdmissionPlugin[],
  ): boolean | Promise<boolean> {
    const observer = this.observer;
    const started = observer === undefined ? 0 : performance.now();
    const timed = observer?.admissionController !== undefined;
    let redefault = false;
    for (let i = 0; i < plugins.length; i++) {
      const plugin = plugins[i]!;
      const began = timed ? performance.now() : 0;
      let outcome: unknown;
      try {
        outcome = step === "admit" ? plugin.admit!(attributes) : plugin.validate!(attributes);
      } catch (error) {
        if (observer !== undefined) observeRefusal(observer, attributes, step, plugin, began, started);
        throw error;
      }
      if (outcome instanceof Promise)
        return this.#runFrom(attributes, step, plugins, i, outcome, { redefault, began, started, observer });
      if (timed) observer!.admissionController!(plugin.name, attributes.operation, false, step, since(began));
      if (outcome === true) redefault = true;
    }
    observer?.admissionStep?.(attributes.operation, false, step, since(started));
    return redefault;
  }

  /** The rest of `#run` once plugin `i`'s answer (`pending`) has to be waited for. */
  async #runFrom(
    attributes: AdmissionAttributes,
    step: AdmissionStep,
    plugins: readonly AdmissionPlugin[],
    i: number,
    pending: Promise<unknown>,
    state: {
      redefault: boolean;
      began: number;
      started: number;
      observer: Partial<AdmissionObserver> | undefined;
    },
  ): Promise<boolean> {
    const { observer, started } = state;
    const timed = observer?.admissionController !== undefined;
    let { redefault, began } = state;
    for (let k = i; k < plugins.length; k++) {
      const plugin = plugins[k]!;
      let outcome: unknown;
      try {
        if (k > i) {
          began = timed ? performance.now() : 0;
          outcome = step === "admit" ? plugin.admit!(attributes) : plugin.validate!(attributes);
        } else outcome = pending;
        if (outcome instanceof Promise) outcome = await outcome;
      } catch (error) {
        if (observer !== undefined) observeRefusal(observer, attributes, step, plugin, began, started);
        throw error;
      }
      if (timed) observer!.admissionController!(plugin.name, attributes.operation, false, step, since(began));
      if (outcome === true) redefault = true;
    }
    observer?.admissionStep?.(attributes.operation, false, step, since(started));
    return redefault;
  }

  #phases(attributes: AdmissionAttributes): Phases {
    const key = resourceKey(attributes.resource);
    let phases = this.#byResource.get(key);
    if (phases === undefined) {
      const handling = this.plugins.filter((p) => p.resources === undefined || p.resources.includes(key));
      phases = {
        mutating: handling.filter((p) => p.admit !== undefined),
        validating: handling.filter((p) => p.validate !== undefined),
      };
      this.#byResource.set(key, phases);
    }
    return phases;
  }
}

function nothing(): void {}

/** Seconds since `start` (a `performance.now()`). */
function since(start: number): number {
  return (performance.now() - start) / 1000;
}

/** A plugin refused (or failed): both its own timing and its phase's are reported as rejected. */
function observeRefusal(
  observer: Partial<AdmissionObserver>,
  attributes: AdmissionAttributes,
  step: AdmissionStep,
  plugin: AdmissionPlugin,
  began: number,
  started: number,
): void {
  observer.admissionController?.(plugin.name, attributes.operation, true, step, since(began));
  observer.admissionStep?.(attributes.operation, true, step, since(started));
}
