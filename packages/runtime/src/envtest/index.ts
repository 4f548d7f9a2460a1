export { type EventuallyOptions, eventually } from "./eventually.js";
export {
  crdDescriptors,
  startTestEnvironment,
  type TestEnvironment,
  type TestEnvironmentOptions,
} from "./test-environment.js";
