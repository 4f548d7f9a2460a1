import { describe, expect, it } from "vitest";
import { formatIPAddress, ipFamilyOf, parseIPAddress } from "./ip-address.js";

describe("IP addresses as Go's netip reads and writes them", () => {
  it.each([
    ["10.96.0.1", "10.96.0.1"],
    ["fd00:10:96::1", "fd00:10:96::1"],
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["fd00:0:0:1::a", "fd00:0:0:1::a"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:DB8::FFFF", "2001:db8::ffff"],
    ["::ffff:1.2.3.4", "::ffff:102:304"],
    ["1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
  ])("%s reads and is written %s", (text, written) => {
    const address = parseIPAddress(text);
    expect(address).toBeDefined();
    expect(formatIPAddress(address!.family, address!.value)).toBe(written);
  });

  it.each([
    "01.2.3.4",
    "256.1.1.1",
    "1.2.3",
    "fe80::1%eth0",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::",
    "",
  ])("refuses %j", (text) => {
    expect(parseIPAddress(text)).toBeUndefined();
    expect(ipFamilyOf(text)).toBeUndefined();
  });
});
