export { type ConformanceTarget, describeClientConformance } from "./conformance.js";
