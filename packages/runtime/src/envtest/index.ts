export { type EventuallyOptions, eventually } from "./eventually.js";
export {
  crdDescriptors,
  startTestEnvironment,
  type TestEnvironment,
  type TestEnvironmentOptions,
  type TestIdentity,
  type WebhookConfiguration,
  type WebhookHandlers,
  type WebhookRule,
} from "./test-environment.js";
