export { type EventuallyOptions, eventually } from "./eventually.js";
export {
  crdDescriptors,
  startTestEnvironment,
  type TestEnvironment,
  type TestEnvironmentOptions,
  type TestIdentity,
} from "./test-environment.js";
