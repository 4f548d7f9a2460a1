import { csiDrivers, csiNodes, csiStorageCapacities, volumeAttachments } from "@reconcile/api";
import { afterEach, describe, expect, it } from "vitest";
import { closeKubectlClusters, kubectlCluster } from "../testing/index.js";
import { refusalLine } from "./kinds.test-util.js";

afterEach(closeKubectlClusters);

describe("CSIDrivers", () => {
  it("are defaulted as SetDefaults_CSIDriver, and count spec changes from the first one", async () => {
    const { client } = await kubectlCluster();
    const drivers = client.resource(csiDrivers);
    const created = await drivers.create({ metadata: { name: "hostpath.csi.k8s.io" }, spec: {} });
    expect(created.spec).toEqual({
      attachRequired: true,
      podInfoOnMount: false,
      volumeLifecycleModes: ["Persistent"],
      storageCapacity: false,
      fsGroupPolicy: "ReadWriteOnceWithFSType",
      requiresRepublish: false,
      seLinuxMount: false,
    });
    expect(created.metadata?.generation).toBeUndefined();
    const relabelled = await drivers.update({
      ...created,
      metadata: { ...created.metadata, labels: { a: "b" } },
    });
    expect(relabelled.metadata?.generation).toBeUndefined();
    const changed = await drivers.update({
      ...relabelled,
      spec: { ...relabelled.spec, storageCapacity: true },
    });
    expect(changed.metadata?.generation).toBe(1);
    expect(
      await refusalLine(() =>
        drivers.update({ ...changed, spec: { ...changed.spec, attachRequired: false } }),
      ),
    ).toBe(
      '422 CSIDriver.storage.k8s.io "hostpath.csi.k8s.io" is invalid: spec.attachedRequired: Invalid value: false: field is immutable',
    );
  });

  it("refuse an update that does not say which version it changes, as every CSI kind does", async () => {
    const { client } = await kubectlCluster();
    const created = await client
      .resource(csiDrivers)
      .create({ metadata: { name: "d.example.com" }, spec: {} });
    const { resourceVersion: _version, ...meta } = created.metadata ?? {};
    expect(await refusalLine(() => client.resource(csiDrivers).update({ ...created, metadata: meta }))).toBe(
      '422 csidrivers.storage.k8s.io "d.example.com" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    const attachment = await client.resource(volumeAttachments).create({
      metadata: { name: "a" },
      spec: { attacher: "d.example.com", nodeName: "n1", source: { persistentVolumeName: "pv" } },
    });
    const { resourceVersion: _again, ...attachmentMeta } = attachment.metadata ?? {};
    expect(
      await refusalLine(() =>
        client
          .resource(volumeAttachments)
          .updateStatus({ ...attachment, metadata: attachmentMeta, status: { attached: true } }),
      ),
    ).toBe(
      '422 volumeattachments.storage.k8s.io "a" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
  });

  it("refuse what ValidateCSIDriver refuses", async () => {
    const { client } = await kubectlCluster();
    const write = () =>
      client.resource(csiDrivers).create({
        metadata: { name: "bad" },
        spec: {
          fsGroupPolicy: "Sometimes",
          tokenRequests: [{ audience: "a", expirationSeconds: 60 }, { audience: "a" }],
          volumeLifecycleModes: ["Forever"],
        },
      });
    expect(await refusalLine(write)).toBe(
      '422 CSIDriver.storage.k8s.io "bad" is invalid: [spec.fsGroupPolicy: Unsupported value: "Sometimes": supported values: "File", "None", "ReadWriteOnceWithFSType", spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes, spec.tokenRequests[1].audience: Duplicate value: "a", spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"]',
    );
  });
});

describe("CSINodes", () => {
  it("keep each registered driver's entry unchanged, and refuse duplicate drivers", async () => {
    const { client } = await kubectlCluster();
    const nodes = client.resource(csiNodes);
    const driver = { name: "hostpath.csi.k8s.io", nodeID: "n1", topologyKeys: ["topology.hostpath/node"] };
    const created = await nodes.create({ metadata: { name: "n1" }, spec: { drivers: [driver] } });
    expect(created.metadata?.generation).toBeUndefined();
    expect(
      await refusalLine(() => nodes.update({ ...created, spec: { drivers: [{ ...driver, nodeID: "n2" }] } })),
    ).toBe(
      '422 CSINode.storage.k8s.io "n1" is invalid: CSINodeDriver: Invalid value: storage.CSINodeDriver{Name:"hostpath.csi.k8s.io", NodeID:"n2", TopologyKeys:[]string{"topology.hostpath/node"}, Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable',
    );
    const added = await nodes.update({
      ...created,
      spec: { drivers: [driver, { name: "other.csi", nodeID: "x" }] },
    });
    expect(added.spec.drivers.map((d) => d.name)).toEqual(["hostpath.csi.k8s.io", "other.csi"]);
    expect(
      await refusalLine(() =>
        nodes.create({ metadata: { name: "n2" }, spec: { drivers: [driver, { ...driver, nodeID: "" }] } }),
      ),
    ).toBe(
      '422 CSINode.storage.k8s.io "n2" is invalid: [spec.drivers[1].nodeID: Required value, spec.drivers[1].name: Duplicate value: "hostpath.csi.k8s.io"]',
    );
  });
});

describe("VolumeAttachments", () => {
  it("need exactly one source, start with an empty status, and never change their spec", async () => {
    const { client } = await kubectlCluster();
    const attachments = client.resource(volumeAttachments);
    const spec = {
      attacher: "hostpath.csi.k8s.io",
      nodeName: "n1",
      source: { persistentVolumeName: "pv-1" },
    };
    expect(
      await refusalLine(() =>
        attachments.create({ metadata: { name: "none" }, spec: { ...spec, source: {} } }),
      ),
    ).toBe(
      '422 VolumeAttachment.storage.k8s.io "none" is invalid: spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
    );
    const created = await attachments.create({
      metadata: { name: "csi-1" },
      spec,
      status: { attached: true },
    });
    expect(created.status).toEqual({ attached: false });
    expect(
      await refusalLine(() => attachments.update({ ...created, spec: { ...spec, nodeName: "n2" } })),
    ).toBe(
      '422 VolumeAttachment.storage.k8s.io "csi-1" is invalid: spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:"hostpath.csi.k8s.io", Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)("pv-1"), InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:"n2"}: field is immutable',
    );
    const attached = await attachments.updateStatus({ ...created, status: { attached: true } });
    expect(attached.status).toEqual({ attached: true });
  });
});

describe("CSIStorageCapacities", () => {
  it("keep their storage class and topology, and may change their capacity", async () => {
    const { client } = await kubectlCluster();
    const capacities = client.resource(csiStorageCapacities, "default");
    const created = await capacities.create({
      metadata: { name: "cap" },
      storageClassName: "fast",
      nodeTopology: { matchLabels: { zone: "a" } },
      capacity: "1Gi",
    });
    const grown = await capacities.update({ ...created, capacity: "2Gi" });
    expect(grown.capacity).toBe("2Gi");
    expect(await refusalLine(() => capacities.update({ ...grown, storageClassName: "slow" }))).toBe(
      '422 CSIStorageCapacity.storage.k8s.io "cap" is invalid: storageClassName: Invalid value: "slow": field is immutable',
    );
    expect(
      await refusalLine(() =>
        capacities.create({ metadata: { name: "neg" }, storageClassName: "fast", capacity: "-1" }),
      ),
    ).toBe(
      '422 CSIStorageCapacity.storage.k8s.io "neg" is invalid: capacity: Invalid value: "-1": must be greater than or equal to 0',
    );
  });
});

describe("kubectl", () => {
  it("prints the CSI kinds with kube-apiserver's columns", async () => {
    const { client, kubectl } = await kubectlCluster();
    await client.resource(csiDrivers).create({
      metadata: { name: "hostpath.csi.k8s.io" },
      spec: { podInfoOnMount: true, tokenRequests: [{ audience: "vault" }, { audience: "" }] },
    });
    await client.resource(csiNodes).create({
      metadata: { name: "n1" },
      spec: { drivers: [{ name: "hostpath.csi.k8s.io", nodeID: "n1" }] },
    });
    await client.resource(volumeAttachments).create({
      metadata: { name: "csi-1" },
      spec: { attacher: "hostpath.csi.k8s.io", nodeName: "n1", source: { persistentVolumeName: "pv-1" } },
    });
    await client
      .resource(csiStorageCapacities, "default")
      .create({ metadata: { name: "cap" }, storageClassName: "fast" });
    const columns = async (resource: string) => {
      const result = await kubectl(["get", resource, "-A"]);
      expect(result.stderr).toBe("");
      return result.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(/\s{2,}/).join("|"));
    };
    const withoutAge = (lines: string[]) => lines.map((line) => line.replace(/\|\d+s$/, "|<age>"));
    expect(withoutAge(await columns("csidrivers"))).toEqual([
      "NAME|ATTACHREQUIRED|PODINFOONMOUNT|STORAGECAPACITY|TOKENREQUESTS|REQUIRESREPUBLISH|MODES|AGE",
      "hostpath.csi.k8s.io|true|true|false|vault,|false|Persistent|<age>",
    ]);
    expect(withoutAge(await columns("csinodes"))).toEqual(["NAME|DRIVERS|AGE", "n1|1|<age>"]);
    expect(withoutAge(await columns("volumeattachments"))).toEqual([
      "NAME|ATTACHER|PV|NODE|ATTACHED|AGE",
      "csi-1|hostpath.csi.k8s.io|pv-1|n1|false|<age>",
    ]);
    expect(await columns("csistoragecapacities")).toEqual([
      "NAMESPACE|NAME|STORAGECLASSNAME|CAPACITY",
      "default|cap|fast|<unset>",
    ]);
  });
});
