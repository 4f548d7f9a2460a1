import type { Admission, AdmissionAttributes } from "../registry/admission.js";
import { type AdmissionPlugin, resourceKey } from "./plugin.js";

interface Phases {
  readonly mutating: readonly AdmissionPlugin[];
  readonly validating: readonly AdmissionPlugin[];
}

/**
 * Plugins in order, mutating then validating (kube-apiserver's admission
 * chain): every write's object passes each plugin's `admit` in turn, then,
 * once the kind has prepared and validated it, each plugin's `validate`. Per
 * resource the chain keeps only the plugins that handle it, so a write of a
 * kind no plugin knows pays one map lookup. The chain runs within the call
 * until a plugin answers with a promise, and waits only from there.
 */
export class AdmissionChain implements Admission {
  readonly plugins: readonly AdmissionPlugin[];
  readonly #byResource = new Map<string, Phases>();

  constructor(plugins: readonly AdmissionPlugin[]) {
    this.plugins = plugins;
  }

  mutate(attributes: AdmissionAttributes): boolean | Promise<boolean> {
    const mutating = this.#phases(attributes).mutating;
    let redefault = false;
    for (let i = 0; i < mutating.length; i++) {
      const outcome = mutating[i]!.admit!(attributes);
      if (outcome instanceof Promise) return this.#mutateFrom(attributes, mutating, i, outcome, redefault);
      if (outcome === true) redefault = true;
    }
    return redefault;
  }

  /** The rest of `mutate` once a plugin's answer (`pending`, of plugin `i`) has to be waited for. */
  async #mutateFrom(
    attributes: AdmissionAttributes,
    mutating: readonly AdmissionPlugin[],
    i: number,
    pending: Promise<unknown>,
    redefault: boolean,
  ): Promise<boolean> {
    if ((await pending) === true) redefault = true;
    for (let k = i + 1; k < mutating.length; k++) {
      const outcome = mutating[k]!.admit!(attributes);
      if ((outcome instanceof Promise ? await outcome : outcome) === true) redefault = true;
    }
    return redefault;
  }

  validate(attributes: AdmissionAttributes): void | Promise<void> {
    const validating = this.#phases(attributes).validating;
    for (let i = 0; i < validating.length; i++) {
      const pending = validating[i]!.validate!(attributes);
      if (pending instanceof Promise) return this.#validateFrom(attributes, validating, i, pending);
    }
  }

  /** The rest of `validate` once plugin `i`'s answer has to be waited for. */
  async #validateFrom(
    attributes: AdmissionAttributes,
    validating: readonly AdmissionPlugin[],
    i: number,
    pending: Promise<void>,
  ): Promise<void> {
    await pending;
    for (let k = i + 1; k < validating.length; k++) {
      const next = validating[k]!.validate!(attributes);
      if (next instanceof Promise) await next;
    }
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
