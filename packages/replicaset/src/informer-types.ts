/**
 * The informer interfaces now live in `@reconcile/controller`, shared by every
 * controller; these re-exports keep existing imports working.
 * @deprecated Import `ControllerInformer` and `ControllerIndexer` from `@reconcile/controller`.
 */
export type { ControllerIndexer, ControllerInformer } from "@reconcile/controller";
