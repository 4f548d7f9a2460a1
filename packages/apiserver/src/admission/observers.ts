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

  /** Adds `observer` for what it has methods for; returns how to remove it. */
  add(observer: Observer): () => void {
    if (observer.admission !== undefined || observer.rejection !== undefined)
      this.#webhookObservers.add(observer);
    if (observer.admissionController !== undefined || observer.admissionStep !== undefined) {
      this.#chainObservers.add(observer);
      this.#observeChain();
    }
    return () => {
      this.#webhookObservers.delete(observer);
      if (this.#chainObservers.delete(observer)) this.#observeChain();
    };
  }

  /**
   * Gives the chain one observer that tells every observer of it, with only
   * the methods some observer has: plugins are timed one by one only when
   * someone asks for that.
   */
  #observeChain(): void {
    if (this.chain === undefined) return;
    const observers = [...this.#chainObservers];
    const steps = observers.filter((o) => o.admissionStep !== undefined);
    const controllers = observers.filter((o) => o.admissionController !== undefined);
    this.chain.observer =
      observers.length === 0
        ? undefined
        : {
            ...(steps.length === 0
              ? {}
              : {
                  admissionStep: (operation, rejected, type, seconds) => {
                    for (const o of steps) o.admissionStep!(operation, rejected, type, seconds);
                  },
                }),
            ...(controllers.length === 0
              ? {}
              : {
                  admissionController: (name, operation, rejected, type, seconds) => {
                    for (const o of controllers)
                      o.admissionController!(name, operation, rejected, type, seconds);
                  },
                }),
          };
  }
}
