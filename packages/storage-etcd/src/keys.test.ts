import { describe, expect, it } from "vitest";
import { KeyLayout, prefixEnd } from "./keys.js";

describe("KeyLayout", () => {
  const layout = new KeyLayout();

  it.each([
    ["/core/pods/ns1/a", "/registry/pods/ns1/a"],
    ["/core/pods/ns1/", "/registry/pods/ns1/"],
    ["/core/pods/", "/registry/pods/"],
    ["/apps/deployments/ns1/d", "/registry/deployments/ns1/d"],
    ["/coordination.k8s.io/leases/kube-system/l", "/registry/leases/kube-system/l"],
    ["/core/namespaces/default", "/registry/namespaces/default"],
    ["/core/nodes/n1", "/registry/minions/n1"],
    ["/core/services/ns1/s", "/registry/services/specs/ns1/s"],
    ["/example.com/widgets/ns1/w", "/registry/example.com/widgets/ns1/w"],
  ])("stores %s under %s and maps it back", (key, etcdKey) => {
    expect(layout.toEtcd(key)).toBe(etcdKey);
    expect(layout.fromEtcd(etcdKey)).toBe(key);
  });

  it("has no single etcd prefix for a key prefix shorter than one resource", () => {
    expect(layout.toEtcd("/")).toBeUndefined();
    expect(layout.toEtcd("/core/")).toBeUndefined();
    expect(layout.toEtcd("/core/pods")).toBeUndefined();
  });

  it.each([
    ["registry", "/registry/"],
    ["/registry", "/registry/"],
    ["/registry/", "/registry/"],
    ["/tenants/a", "/tenants/a/"],
  ])("normalises the prefix %s to %s, as --etcd-prefix is", (prefix, root) => {
    const custom = new KeyLayout({ prefix });
    expect(custom.root).toBe(root);
    expect(custom.toEtcd("/core/pods/ns/a")).toBe(`${root}pods/ns/a`);
    expect(custom.fromEtcd(`${root}pods/ns/a`)).toBe("/core/pods/ns/a");
  });
});

describe("prefixEnd", () => {
  it.each([
    ["/registry/pods/", "/registry/pods0"],
    ["/registry/pods/ns1/", "/registry/pods/ns10"],
    ["a", "b"],
  ])("ends the range of %s at %s, so that ns1 never covers ns10", (prefix, end) => {
    expect(prefixEnd(Buffer.from(prefix)).toString("latin1")).toBe(end);
  });

  it("drops trailing 0xff bytes and runs to the end of the keyspace when every byte is 0xff", () => {
    expect([...prefixEnd(Buffer.from([0x61, 0xff]))]).toEqual([0x62]);
    expect([...prefixEnd(Buffer.from([0xff, 0xff]))]).toEqual([0]);
  });
});
