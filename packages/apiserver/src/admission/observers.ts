import type { AdmissionChain, AdmissionObserver } from "./chain.js";
import type { WebhookObserver } from "./webhook/dispatcher.js";

type Observer = Partial<WebhookObserver> & Partial<AdmissionObserver>;

/**
 * Who observes a server's admission: the metrics of each listener, and
 * anyone else attached. The webhook plugins and the chain report once, to a
 * fan-out each; the chain is timed only while someone observes it.
 */
export class AdmissionObservers {
  readonly #webhookObservers = new Set<Partial<WebhookObserver>>();
  readonly #chainObservers = new Set<Partial<AdmissionObserver>>();
  /** The chain whose `observer` follows whether anyone times it. */
  chain: AdmissionChain | undefined;

  /** What the webhook plugins report to: every observer that counts webhook calls. */
  readonly webhooks: WebhookObserver = {
    admission: (...report) => {
      for (const observer of this.#webhookObservers) observer.admission?.(...report);
    },
    rejection: (...report) => {
      for (const observer of this.#webhookObservers) observer.rejection?.(...report);
    },
  };

  /** What the chain reports to while observed: every observer that times it. */
  readonly #chainFanOut: AdmissionObserver = {
    admissionController: (...report) => {
      for (const observer of this.#chainObservers) observer.admissionController?.(...report);
    },
    admissionStep: (...report) => {
      for (const observer of this.#chainObservers) observer.admissionStep?.(...report);
    },
  };

  /** Adds `observer` for what it has methods for; returns how to remove it. */
  add(observer: Observer): () => void {
    if (observer.admission !== undefined || observer.rejection !== undefined)
      this.#webhookObservers.add(observer);
    if (observer.admissionController !== undefined || observer.admissionStep !== undefined) {
      this.#chainObservers.add(observer);
      if (this.chain !== undefined) this.chain.observer = this.#chainFanOut;
    }
    return () => {
      this.#webhookObservers.delete(observer);
      this.#chainObservers.delete(observer);
      if (this.#chainObservers.size === 0 && this.chain !== undefined) this.chain.observer = undefined;
    };
  }
}
