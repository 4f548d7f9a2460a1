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
 * kind no plugin knows pays one map lookup.
 */
export class AdmissionChain implements Admission {
  readonly plugins: readonly AdmissionPlugin[];
  readonly #byResource = new Map<string, Phases>();

  constructor(plugins: readonly AdmissionPlugin[]) {
    this.plugins = plugins;
  }

  async mutate(attributes: AdmissionAttributes): Promise<boolean> {
    let redefault = false;
    for (const plugin of this.#phases(attributes).mutating) {
      const outcome = plugin.admit!(attributes);
      if ((outcome instanceof Promise ? await outcome : outcome) === true) redefault = true;
    }
    return redefault;
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.#phases(attributes).validating) {
      const pending = plugin.validate!(attributes);
      if (pending !== undefined) await pending;
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
