/** The ServiceAccount descriptor, defined in `@reconcile/api` and re-exported where it was first published. */
export { serviceAccounts } from "@reconcile/api";
export {
  RootCACertPublisher,
  type RootCACertPublisherOptions,
  rootCACertConfigMapName,
  rootCADescription,
  rootCADescriptionAnnotation,
} from "./root-ca-publisher.js";
export {
  ServiceAccountsController,
  type ServiceAccountsControllerOptions,
} from "./serviceaccounts-controller.js";
export {
  type LegacyTokenSigner,
  ServiceAccountTokensController,
  type ServiceAccountTokensControllerOptions,
  serviceAccountNameAnnotation,
  serviceAccountTokenSecretType,
  serviceAccountUIDAnnotation,
} from "./tokens-controller.js";
