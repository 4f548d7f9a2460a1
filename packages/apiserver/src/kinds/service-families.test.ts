// A Service's IP family fields on a single-stack IPv4 cluster, after upstream's
// service storage tests (TestCreateInitIPFields, TestCreateInvalidClusterIPInputs)
// for the cases a single-stack cluster decides.
import { type Service, StatusError, services } from "@reconcile/api";
import { afterAll, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";

const server = new ApiServer();
afterAll(() => server.close());
const client = server.client().resource(services, "default");
let n = 0;

/** The family fields of what a create stored (allocated IPs as "allocated"), or the error's code and message. */
type Families = {
  ipFamilyPolicy?: string | undefined;
  ipFamilies?: string[] | undefined;
  clusterIPs?: string[] | undefined;
};

async function create(spec: NonNullable<Service["spec"]>): Promise<Families | string> {
  try {
    const created = await client.create({
      metadata: { name: `svc-${n++}` },
      spec: { ports: [{ port: 80 }], ...spec },
    });
    const { ipFamilyPolicy, ipFamilies, clusterIPs } = created.spec ?? {};
    return {
      ipFamilyPolicy,
      ipFamilies,
      clusterIPs: clusterIPs?.map((ip) => (ip === "None" ? ip : "allocated")),
    };
  } catch (error) {
    if (!StatusError.isInstance(error)) throw error;
    return `${error.status.code} ${error.status.message}`;
  }
}

const selector = { app: "web" };

describe("a Service's IP families on a single-stack IPv4 cluster", () => {
  it.each<[string, NonNullable<Service["spec"]>, Families]>([
    [
      "nothing set",
      { selector },
      { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"], clusterIPs: ["allocated"] },
    ],
    [
      "PreferDualStack falls back to one family",
      { selector, ipFamilyPolicy: "PreferDualStack" },
      { ipFamilyPolicy: "PreferDualStack", ipFamilies: ["IPv4"], clusterIPs: ["allocated"] },
    ],
    [
      "the family of a requested cluster IP",
      { selector, clusterIP: "10.96.0.77" },
      { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"], clusterIPs: ["allocated"] },
    ],
    [
      "headless with a selector",
      { selector, clusterIP: "None" },
      { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"], clusterIPs: ["None"] },
    ],
    [
      "headless without a selector: both families",
      { clusterIP: "None" },
      { ipFamilyPolicy: "RequireDualStack", ipFamilies: ["IPv4", "IPv6"], clusterIPs: ["None"] },
    ],
    [
      "headless without a selector, single-stack",
      { clusterIP: "None", ipFamilyPolicy: "SingleStack" },
      { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"], clusterIPs: ["None"] },
    ],
    [
      "headless without a selector, IPv6 named",
      { clusterIP: "None", ipFamilies: ["IPv6"], ipFamilyPolicy: "PreferDualStack" },
      { ipFamilyPolicy: "PreferDualStack", ipFamilies: ["IPv6", "IPv4"], clusterIPs: ["None"] },
    ],
  ])("%s", async (_name, spec, expected) => {
    expect(await create(spec)).toEqual(expected);
  });

  it.each<[string, NonNullable<Service["spec"]>, string]>([
    [
      "RequireDualStack",
      { selector, ipFamilyPolicy: "RequireDualStack" },
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    ],
    [
      "an IPv6 family",
      { selector, ipFamilies: ["IPv6"] },
      'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
    ],
    [
      "two families, single-stack",
      { selector, ipFamilies: ["IPv4", "IPv6"] },
      "spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
    ],
    [
      "two families, PreferDualStack",
      { selector, ipFamilies: ["IPv4", "IPv6"], ipFamilyPolicy: "PreferDualStack" },
      'spec.ipFamilies[1]: Invalid value: "IPv6": not configured on this cluster',
    ],
    [
      "an IPv6 cluster IP",
      { selector, clusterIP: "fd00::10", ipFamilyPolicy: "PreferDualStack" },
      'spec.clusterIPs[0]: Invalid value: []string{"fd00::10"}: IPv6 is not configured on this cluster',
    ],
    [
      "two cluster IPs, single-stack",
      { selector, clusterIP: "10.96.0.50", clusterIPs: ["10.96.0.50", "fd00::5"] },
      '[spec.ipFamilyPolicy: Invalid value: "SingleStack": must be \'RequireDualStack\' or \'PreferDualStack\' when multiple cluster IPs are specified, spec.clusterIPs[1]: Invalid value: []string{"10.96.0.50", "fd00::5"}: IPv6 is not configured on this cluster]',
    ],
    [
      "cluster IPs without clusterIP",
      { selector, clusterIPs: ["10.96.0.50"] },
      'spec.clusterIPs: Invalid value: []string{"10.96.0.50"}: must be empty when `clusterIP` is not specified',
    ],
    [
      "cluster IPs not starting with clusterIP",
      { selector, clusterIP: "10.96.0.50", clusterIPs: ["10.96.0.51"] },
      'spec.clusterIPs: Invalid value: []string{"10.96.0.51"}: first value must match `clusterIP`',
    ],
    [
      "an unknown family, twice",
      { selector, ipFamilies: ["IPv5", "IPv5"] as never, ipFamilyPolicy: "PreferDualStack" },
      '[spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6", spec.ipFamilies[1]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6", spec.ipFamilies[1]: Duplicate value: "IPv5"]',
    ],
    [
      "an unknown policy",
      { selector, ipFamilyPolicy: "Both" as never },
      'spec.ipFamilyPolicy: Unsupported value: "Both": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"',
    ],
  ])("refuses %s with upstream's 422 (several errors in brackets)", async (_name, spec, detail) => {
    const refused = await create(spec);
    expect(refused).toBe(`422 Service "svc-${n - 1}" is invalid: ${detail}`);
  });

  it("an update without a policy keeps the old one; RequireDualStack is refused on update too", async () => {
    const created = await client.create({
      metadata: { name: "kept" },
      spec: { selector, ports: [{ port: 80 }], ipFamilyPolicy: "PreferDualStack" },
    });
    const { ipFamilyPolicy: _policy, ...spec } = created.spec!;
    const updated = await client.update({ ...created, spec });
    expect(updated.spec?.ipFamilyPolicy).toBe("PreferDualStack");
    await expect(
      client.update({ ...updated, spec: { ...updated.spec, ipFamilyPolicy: "RequireDualStack" } }),
    ).rejects.toThrow(
      'Service "kept" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    );
  });
});
