// The Logger of every reconcile package lives in @reconcile/api; it is re-exported here
// because controllers have always imported it from @reconcile/controller.
export { type Logger, noopLogger } from "@reconcile/api";
