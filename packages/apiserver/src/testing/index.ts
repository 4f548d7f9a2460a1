// Test helpers for code that runs against the API server: the real kubectl against an embedded one.
export { closeKubectlClusters, type KubectlCluster, type KubectlResult, kubectlCluster } from "./kubectl.js";
export {
  builtinCorpus,
  type CorpusEntry,
  type FuzzFailure,
  type MutationFuzzOptions,
  type MutationFuzzReport,
  mutationFuzz,
} from "./mutation-fuzz.js";
