export * from "./pod-workers/index.js";
