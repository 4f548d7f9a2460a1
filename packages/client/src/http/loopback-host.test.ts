import { describe, expect, it } from "vitest";
import { loopbackHostAllowed } from "./loopback-host.js";

describe("loopbackHostAllowed", () => {
  it.each([
    [undefined, true],
    ["localhost", true],
    ["localhost:8080", true],
    ["127.0.0.1:9443", true],
    ["[::1]:80", true],
    ["::1", true],
    ["rebind.example", false],
    ["rebind.example:8080", false],
    ["127.0.0.1.nip.io", false],
  ])("Host %s → %s", (host, allowed) => {
    expect(loopbackHostAllowed(host)).toBe(allowed);
  });
});
