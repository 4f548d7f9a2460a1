// Services on dual-stack clusters, after upstream's service storage tests
// (TestCreateInitIPFields and TestUpdateIPsFromSingleStack /
// TestUpdateIPsFromDualStack in pkg/registry/core/service/storage): the
// families a policy gives on a cluster serving both, IPs taken per family,
// upgrades and downgrades on update, and the IPs given back.
import { type Service, StatusError, services } from "@reconcile/api";
import { afterAll, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { ClusterIPAllocator } from "./service-ips.js";

const v4First = new ApiServer({ serviceClusterIPRange: "10.96.0.0/16,fd00:10:96::/112" });
const v6First = new ApiServer({ serviceClusterIPRange: "fd00:10:96::/112,10.96.0.0/16" });
afterAll(() => Promise.all([v4First.close(), v6First.close()]));
const selector = { app: "web" };
let n = 0;

type Families = { ipFamilyPolicy?: string; ipFamilies?: string[]; clusterIPs?: string[] };

/** The family fields of what a create stored, each allocated IP shown by its family, or the error. */
async function create(server: ApiServer, spec: NonNullable<Service["spec"]>): Promise<Families | string> {
  try {
    const created = await server
      .client()
      .resource(services, "default")
      .create({ metadata: { name: `svc-${n++}` }, spec: { ports: [{ port: 80 }], ...spec } });
    return shown(created);
  } catch (error) {
    if (!StatusError.isInstance(error)) throw error;
    return `${error.status.code} ${error.status.message}`;
  }
}

function shown(service: Service): Families {
  const { ipFamilyPolicy, ipFamilies, clusterIPs, clusterIP } = service.spec ?? {};
  expect(clusterIP).toBe(clusterIPs?.[0]);
  return {
    ...(ipFamilyPolicy === undefined ? {} : { ipFamilyPolicy }),
    ...(ipFamilies === undefined ? {} : { ipFamilies }),
    ...(clusterIPs === undefined ? {} : { clusterIPs: clusterIPs.map(familyOfIP) }),
  };
}

function familyOfIP(ip: string): string {
  if (ip === "None") return ip;
  if (/^10\.96\.\d+\.\d+$/.test(ip)) return "v4";
  if (/^fd00:10:96::[0-9a-f]{1,4}$/.test(ip)) return "v6";
  return `unexpected ${ip}`;
}

describe("creating Services on a dual-stack cluster", () => {
  it.each<[string, ApiServer, NonNullable<Service["spec"]>, Families]>([
    ["nothing set: single-stack, primary family", v4First, { selector }, single("IPv4", "v4")],
    ["nothing set, IPv6 primary", v6First, { selector }, single("IPv6", "v6")],
    [
      "PreferDualStack: both, primary first",
      v4First,
      { selector, ipFamilyPolicy: "PreferDualStack" },
      dual("PreferDualStack", ["IPv4", "IPv6"], ["v4", "v6"]),
    ],
    [
      "RequireDualStack, IPv6 primary",
      v6First,
      { selector, ipFamilyPolicy: "RequireDualStack" },
      dual("RequireDualStack", ["IPv6", "IPv4"], ["v6", "v4"]),
    ],
    [
      "RequireDualStack naming IPv6 first on an IPv4-primary cluster",
      v4First,
      { selector, ipFamilyPolicy: "RequireDualStack", ipFamilies: ["IPv6"] },
      dual("RequireDualStack", ["IPv6", "IPv4"], ["v6", "v4"]),
    ],
    [
      "SingleStack naming the secondary family",
      v4First,
      { selector, ipFamilies: ["IPv6"] },
      single("IPv6", "v6"),
    ],
    [
      "requested IPs of both families infer both",
      v4First,
      {
        selector,
        ipFamilyPolicy: "RequireDualStack",
        clusterIP: "fd00:10:96::7",
        clusterIPs: ["fd00:10:96::7", "10.96.0.7"],
      },
      dual("RequireDualStack", ["IPv6", "IPv4"], ["v6", "v4"]),
    ],
    [
      "a requested primary IP, the second allocated",
      v4First,
      { selector, ipFamilyPolicy: "PreferDualStack", clusterIP: "10.96.0.8" },
      dual("PreferDualStack", ["IPv4", "IPv6"], ["v4", "v6"]),
    ],
    [
      "headless with a selector, PreferDualStack",
      v4First,
      { selector, clusterIP: "None", ipFamilyPolicy: "PreferDualStack" },
      { ipFamilyPolicy: "PreferDualStack", ipFamilies: ["IPv4", "IPv6"], clusterIPs: ["None"] },
    ],
    [
      "headless without a selector",
      v6First,
      { clusterIP: "None" },
      { ipFamilyPolicy: "RequireDualStack", ipFamilies: ["IPv6", "IPv4"], clusterIPs: ["None"] },
    ],
    ["ExternalName: no family fields", v4First, { type: "ExternalName", externalName: "example.com" }, {}],
  ])("%s", async (_name, server, spec, expected) => {
    expect(await create(server, spec)).toEqual(expected);
  });

  it.each<[string, NonNullable<Service["spec"]>, string]>([
    [
      "two IPs of one family",
      {
        selector,
        ipFamilyPolicy: "PreferDualStack",
        clusterIP: "10.96.0.9",
        clusterIPs: ["10.96.0.9", "10.96.0.10"],
      },
      'spec.clusterIPs: Invalid value: []string{"10.96.0.9", "10.96.0.10"}: may specify no more than one IP for each IP family',
    ],
    [
      "an IP that is not of its named family",
      { selector, ipFamilyPolicy: "PreferDualStack", ipFamilies: ["IPv6"], clusterIP: "10.96.0.11" },
      'spec.clusterIPs[0]: Invalid value: "10.96.0.11": expected an IPv6 value as indicated by `ipFamilies[0]`',
    ],
    [
      "an IP that is not an IP",
      { selector, clusterIP: "10.96.0.300" },
      'spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ],
    [
      "three IPs",
      {
        selector,
        ipFamilyPolicy: "RequireDualStack",
        clusterIP: "10.96.0.12",
        clusterIPs: ["10.96.0.12", "fd00:10:96::12", "10.96.0.13"],
      },
      'spec.clusterIPs: Invalid value: []string{"10.96.0.12", "fd00:10:96::12", "10.96.0.13"}: may only hold up to 2 values',
    ],
    [
      "None among others",
      {
        selector,
        ipFamilyPolicy: "RequireDualStack",
        clusterIP: "None",
        clusterIPs: ["None", "fd00:10:96::14"],
      },
      'spec.clusterIPs: Invalid value: []string{"None", "fd00:10:96::14"}: \'None\' must be the first and only value',
    ],
    [
      "an IPv6 IP outside the range",
      {
        selector,
        ipFamilyPolicy: "RequireDualStack",
        clusterIP: "10.96.0.15",
        clusterIPs: ["10.96.0.15", "fd00::1"],
      },
      'spec.clusterIPs: Invalid value: []string{"10.96.0.15", "fd00::1"}: failed to allocate IP fd00::1: the provided IP (fd00::1) is not in the valid range. The range of valid IPs is fd00:10:96::/112',
    ],
  ])("refuses %s with upstream's 422", async (_name, spec, detail) => {
    const refused = await create(v4First, spec);
    expect(refused).toBe(`422 Service "svc-${n - 1}" is invalid: ${detail}`);
  });

  it("a refused second IP gives the first back: nothing is held", async () => {
    const before = v4First.serviceIPs.used;
    const refused = await create(v4First, {
      selector,
      ipFamilyPolicy: "RequireDualStack",
      clusterIP: "10.96.0.16",
      clusterIPs: ["10.96.0.16", "fd00::2"],
    });
    expect(refused).toMatch(/^422 /);
    expect(v4First.serviceIPs.used).toBe(before);
  });
});

describe("updating Services on a dual-stack cluster", () => {
  const client = v4First.client().resource(services, "default");

  it("SingleStack to PreferDualStack takes a second IP, SingleStack again gives it back", async () => {
    const before = v4First.serviceIPs.used;
    const created = await client.create({
      metadata: { name: "grow" },
      spec: { selector, ports: [{ port: 80 }] },
    });
    expect(v4First.serviceIPs.used).toBe(before + 1);
    const upgraded = await client.patch(
      "grow",
      { spec: { ipFamilyPolicy: "PreferDualStack" } },
      { type: "merge" },
    );
    expect(shown(upgraded)).toEqual(dual("PreferDualStack", ["IPv4", "IPv6"], ["v4", "v6"]));
    expect(upgraded.spec?.clusterIPs?.[0]).toBe(created.spec?.clusterIP);
    expect(v4First.serviceIPs.used).toBe(before + 2);
    // A policy of SingleStack with the lists as they were keeps the primary only.
    const downgraded = await client.patch(
      "grow",
      { spec: { ipFamilyPolicy: "SingleStack" } },
      { type: "merge" },
    );
    expect(shown(downgraded)).toEqual(single("IPv4", "v4"));
    expect(downgraded.spec?.clusterIPs).toEqual(created.spec?.clusterIPs);
    expect(v4First.serviceIPs.used).toBe(before + 1);
    await client.delete("grow");
    expect(v4First.serviceIPs.used).toBe(before);
  });

  it("an upgrade may name its second IP", async () => {
    await client.create({ metadata: { name: "named" }, spec: { selector, ports: [{ port: 80 }] } });
    const current = await client.get("named");
    const upgraded = await client.update({
      ...current,
      spec: {
        ...current.spec,
        ipFamilyPolicy: "RequireDualStack",
        clusterIPs: [current.spec!.clusterIP!, "fd00:10:96::42"],
      },
    });
    expect(upgraded.spec?.clusterIPs).toEqual([current.spec?.clusterIP, "fd00:10:96::42"]);
    expect(upgraded.spec?.ipFamilies).toEqual(["IPv4", "IPv6"]);
  });

  it("a downgrade needs SingleStack; the primary IP and family never change", async () => {
    const created = await client.create({
      metadata: { name: "both" },
      spec: { selector, ports: [{ port: 80 }], ipFamilyPolicy: "RequireDualStack" },
    });
    const [v4, v6] = created.spec!.clusterIPs!;
    await expect(client.update({ ...created, spec: { ...created.spec, clusterIPs: [v4!] } })).rejects.toThrow(
      `Service "both" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be 'SingleStack' to release the secondary cluster IP`,
    );
    const secondary = [v4!, "fd00:10:96::99"];
    await expect(
      client.update({ ...created, spec: { ...created.spec, clusterIPs: secondary } }),
    ).rejects.toThrow(
      `Service "both" is invalid: spec.clusterIPs[1]: Invalid value: []string{"${v4}", "fd00:10:96::99"}: may not change once set`,
    );
    const primary = ["10.96.0.99", v6!];
    await expect(
      client.update({ ...created, spec: { ...created.spec, clusterIP: primary[0]!, clusterIPs: primary } }),
    ).rejects.toThrow(
      `Service "both" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99", "${v6}"}: may not change once set`,
    );
    const unchanged = await client.get("both");
    expect(unchanged.spec?.clusterIPs).toEqual([v4, v6]);
  });

  it("becoming ExternalName gives both IPs back; leaving it takes both again", async () => {
    const before = v4First.serviceIPs.used;
    await client.create({
      metadata: { name: "away" },
      spec: { selector, ports: [{ port: 80 }], ipFamilyPolicy: "PreferDualStack" },
    });
    expect(v4First.serviceIPs.used).toBe(before + 2);
    const external = await client.patch(
      "away",
      { spec: { type: "ExternalName", externalName: "example.com" } },
      { type: "merge" },
    );
    expect(shown(external)).toEqual({});
    expect(v4First.serviceIPs.used).toBe(before);
    const back = await client.patch(
      "away",
      { spec: { type: "ClusterIP", externalName: null, ipFamilyPolicy: "PreferDualStack" } },
      { type: "merge" },
    );
    expect(shown(back)).toEqual(dual("PreferDualStack", ["IPv4", "IPv6"], ["v4", "v6"]));
    expect(v4First.serviceIPs.used).toBe(before + 2);
  });
});

describe("the allocator's ranges (kube-apiserver's --service-cluster-ip-range)", () => {
  it("default/kubernetes takes the primary range's first address, single-stack", async () => {
    const kubernetes = await v6First.client().resource(services, "default").get("kubernetes");
    expect(kubernetes.spec).toMatchObject({
      clusterIP: "fd00:10:96::1",
      clusterIPs: ["fd00:10:96::1"],
      ipFamilies: ["IPv6"],
      ipFamilyPolicy: "SingleStack",
    });
  });

  it("refuses ranges kube-apiserver refuses", () => {
    expect(() => new ClusterIPAllocator("fd00::/107")).toThrow(
      'service CIDR "fd00::/107" is too large; for 128-bit addresses, the mask must be >= 108',
    );
    expect(() => new ClusterIPAllocator("10.0.0.0/8")).toThrow(
      'service CIDR "10.0.0.0/8" is too large; for 32-bit addresses, the mask must be >= 12',
    );
    expect(() => new ClusterIPAllocator("10.96.0.0/16,10.97.0.0/16")).toThrow(
      "the two ranges must be of different IP families",
    );
    expect(() => new ClusterIPAllocator("10.96.0.0/16,fd00::/112,fd01::/112")).toThrow(
      "at most two ranges (one per IP family)",
    );
  });

  it("an IPv6 range hands out every address above the network address, then is full", () => {
    const allocator = new ClusterIPAllocator("fd00::/126", () => 0);
    expect(allocator.families).toEqual(["IPv6"]);
    expect(allocator.first).toBe("fd00::1");
    const taken = [allocator.allocate("a"), allocator.allocate("b"), allocator.allocate("c")].sort();
    expect(taken).toEqual(["fd00::1", "fd00::2", "fd00::3"]);
    expect(() => allocator.allocate("d")).toThrow("failed to allocate a serviceIP: range is full");
    allocator.release("fd00:0::2");
    expect(allocator.allocate("e")).toBe("fd00::2");
  });
});

function single(family: string, ip: string): Families {
  return { ipFamilyPolicy: "SingleStack", ipFamilies: [family], clusterIPs: [ip] };
}

function dual(policy: string, families: string[], ips: string[]): Families {
  return { ipFamilyPolicy: policy, ipFamilies: families, clusterIPs: ips };
}
