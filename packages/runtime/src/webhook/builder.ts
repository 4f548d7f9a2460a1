import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import type { Manager } from "../manager.js";
import { type Defaulter, defaultingHandler, type Validator, validatingHandler } from "./admission.js";
import type { Conversion } from "./conversion.js";

/** kubebuilder's path of a kind's webhook: `/mutate-apps-v1-deployment`, `/validate--v1-pod`. */
export function webhookPath(kind: "mutate" | "validate", resource: ResourceDescriptor): string {
  return `/${kind}-${resource.group.replaceAll(".", "-")}-${resource.version}-${resource.kind.toLowerCase()}`;
}

/**
 * Webhooks for one kind (controller-runtime's `WebhookBuilder`): a defaulter
 * served at `/mutate-<group>-<version>-<kind>`, a validator at
 * `/validate-…`, on the manager's webhook server.
 */
export class WebhookBuilder<T extends KubeObject = KubeObject> {
  readonly #manager: Manager;
  #resource: ResourceDescriptor<T> | undefined;
  #defaulter: Defaulter<T> | undefined;
  #validator: Validator<T> | undefined;
  #conversion: Conversion | undefined;

  constructor(manager: Manager) {
    this.#manager = manager;
  }

  /** The kind the webhooks are for. */
  for<U extends KubeObject>(resource: ResourceDescriptor<U>): WebhookBuilder<U> {
    const next = this as unknown as WebhookBuilder<U>;
    next.#resource = resource;
    return next;
  }

  withDefaulter(defaulter: Defaulter<T>): this {
    this.#defaulter = defaulter;
    return this;
  }

  withValidator(validator: Validator<T>): this {
    this.#validator = validator;
    return this;
  }

  /**
   * Converts between the kind's versions through a hub (controller-runtime's
   * `Hub` and `Convertible`), served at `/convert` for every kind that
   * registers one.
   */
  withConversion(conversion: Conversion): this {
    this.#conversion = conversion;
    return this;
  }

  /** Registers the webhooks; returns the paths they are served at. */
  complete(): { mutatePath?: string; validatePath?: string; convertPath?: string } {
    const resource = this.#resource;
    if (resource === undefined) throw new Error("WebhookBuilder: call for(resource) before complete()");
    if (this.#defaulter === undefined && this.#validator === undefined && this.#conversion === undefined)
      throw new Error(
        `WebhookBuilder for ${resource.kind}: give a defaulter, a validator, a conversion, or more`,
      );
    const server = this.#manager.getWebhookServer();
    const paths: { mutatePath?: string; validatePath?: string; convertPath?: string } = {};
    if (this.#conversion !== undefined) {
      server.registerConversion(`${resource.group}/${resource.kind}`, this.#conversion);
      paths.convertPath = "/convert";
    }
    if (this.#defaulter !== undefined) {
      paths.mutatePath = webhookPath("mutate", resource);
      server.register(paths.mutatePath, defaultingHandler(this.#defaulter));
    }
    if (this.#validator !== undefined) {
      paths.validatePath = webhookPath("validate", resource);
      server.register(paths.validatePath, validatingHandler(this.#validator));
    }
    return paths;
  }
}

/** Starts a webhook builder on `manager` (controller-runtime's `NewWebhookManagedBy`). */
export function newWebhookManagedBy(manager: Manager): WebhookBuilder {
  return new WebhookBuilder(manager);
}
