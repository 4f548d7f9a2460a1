export { FakeLeaseClient, type FakeLeaseClientOptions, type LeaseAction } from "./fake-lease-client.js";
export { type InterceptedCall, InterceptingClient, type Interceptor } from "./intercepting-client.js";
export { SkewedClock } from "./skewed-clock.js";
