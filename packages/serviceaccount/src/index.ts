export {
  ServiceAccountsController,
  type ServiceAccountsControllerOptions,
  serviceAccounts,
} from "./serviceaccounts-controller.js";
