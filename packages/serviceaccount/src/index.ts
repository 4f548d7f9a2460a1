/** The ServiceAccount descriptor, defined in `@reconcile/api` and re-exported where it was first published. */
export { serviceAccounts } from "@reconcile/api";
export {
  ServiceAccountsController,
  type ServiceAccountsControllerOptions,
} from "./serviceaccounts-controller.js";
