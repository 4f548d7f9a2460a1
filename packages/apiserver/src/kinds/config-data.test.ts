// ConfigMaps, Secrets and Service ports as upstream validates them (pkg/apis/core/validation:
// ValidateConfigMap, ValidateSecret, their updates, validateServicePort) and as
// Convert_v1_Secret_To_core_Secret writes stringData into data.
import { type ConfigMap, configMaps, type Secret, type Service, secrets, services } from "@reconcile/api";
import { afterAll, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { refusalLine as refusal } from "./kinds.test-util.js";

const server = new ApiServer();
afterAll(() => server.close());
const client = server.client();

const keyFormat =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

describe("ConfigMap validation", () => {
  const cms = client.resource(configMaps, "default");

  it.each<[string, ConfigMap, string]>([
    [
      "a key in both data and binaryData",
      { metadata: { name: "dup" }, data: { k: "v" }, binaryData: { k: "dg==" } },
      'ConfigMap "dup" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData',
    ],
    [
      "a key with a space",
      { metadata: { name: "space" }, data: { "bad key": "v" } },
      `ConfigMap "space" is invalid: data[bad key]: Invalid value: "bad key": ${keyFormat}`,
    ],
    [
      "keys that climb directories",
      { metadata: { name: "dots" }, data: { "..": "a" }, binaryData: { "..x": "dg==" } },
      `ConfigMap "dots" is invalid: [data[..]: Invalid value: "..": must not be '..', binaryData[..x]: Invalid value: "..x": must not start with '..']`,
    ],
    [
      "more than 1 MiB of values",
      { metadata: { name: "large" }, data: { a: "x".repeat(600_000), b: "y".repeat(600_000) } },
      'ConfigMap "large" is invalid: : Too long: may not be more than 1048576 bytes',
    ],
  ])("refuses %s", async (_name, configMap, message) => {
    expect(await refusal(() => cms.create(configMap))).toBe(`422 ${message}`);
  });

  it("keeps an immutable ConfigMap's data and immutability", async () => {
    const frozen = await cms.create({ metadata: { name: "frozen" }, immutable: true, data: { a: "1" } });
    expect(await refusal(() => cms.update({ ...frozen, data: { a: "2" } }))).toBe(
      '422 ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    );
    expect(await refusal(() => cms.update({ ...frozen, immutable: false }))).toBe(
      '422 ConfigMap "frozen" is invalid: immutable: Forbidden: field is immutable when `immutable` is set',
    );
    // Metadata may still change.
    const labelled = await cms.update({ ...frozen, metadata: { ...frozen.metadata, labels: { a: "b" } } });
    expect(labelled.metadata?.labels).toEqual({ a: "b" });
  });
});

describe("Secrets", () => {
  const secretClient = client.resource(secrets, "default");

  it("writes stringData into data, its values winning, and never stores it", async () => {
    const created = await secretClient.create({
      metadata: { name: "mixed" },
      data: { a: Buffer.from("old").toString("base64"), b: Buffer.from("kept").toString("base64") },
      stringData: { a: "new ✓" },
    });
    expect(created.data).toEqual({
      a: Buffer.from("new ✓").toString("base64"),
      b: Buffer.from("kept").toString("base64"),
    });
    expect(created.stringData).toBeUndefined();
    const patched = await secretClient.patch("mixed", { stringData: { c: "added" } }, { type: "merge" });
    expect(Object.keys(patched.data ?? {})).toEqual(["a", "b", "c"]);
    expect(patched.stringData).toBeUndefined();
    expect((await secretClient.get("mixed")).stringData).toBeUndefined();
  });

  it.each<[string, Secret, string]>([
    [
      "a TLS Secret without its keys",
      { metadata: { name: "tls" }, type: "kubernetes.io/tls", data: {} },
      'Secret "tls" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]',
    ],
    [
      "a basic-auth Secret with neither username nor password",
      { metadata: { name: "basic" }, type: "kubernetes.io/basic-auth" },
      'Secret "basic" is invalid: [data[username]: Required value, data[password]: Required value]',
    ],
    [
      "an ssh-auth Secret without a private key",
      { metadata: { name: "ssh" }, type: "kubernetes.io/ssh-auth", stringData: { "ssh-privatekey": "" } },
      'Secret "ssh" is invalid: data[ssh-privatekey]: Required value',
    ],
    [
      "a docker config that is not a JSON object",
      {
        metadata: { name: "docker" },
        type: "kubernetes.io/dockerconfigjson",
        stringData: { ".dockerconfigjson": "[]" },
      },
      'Secret "docker" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}',
    ],
    [
      "a key with a slash",
      { metadata: { name: "slash" }, stringData: { "a/b": "x" } },
      `Secret "slash" is invalid: data[a/b]: Invalid value: "a/b": ${keyFormat}`,
    ],
  ])("refuses %s", async (_name, secret, message) => {
    expect(await refusal(() => secretClient.create(secret))).toBe(`422 ${message}`);
  });

  it("accepts each type with what it needs", async () => {
    const ok: Secret[] = [
      {
        metadata: { name: "tls-ok" },
        type: "kubernetes.io/tls",
        stringData: { "tls.crt": "c", "tls.key": "k" },
      },
      { metadata: { name: "basic-ok" }, type: "kubernetes.io/basic-auth", stringData: { password: "" } },
      {
        metadata: { name: "docker-ok" },
        type: "kubernetes.io/dockerconfigjson",
        stringData: { ".dockerconfigjson": '{"auths":{}}' },
      },
    ];
    for (const secret of ok) expect((await secretClient.create(secret)).type).toBe(secret.type);
  });

  it("keeps an immutable Secret's data", async () => {
    const frozen = await secretClient.create({
      metadata: { name: "frozen" },
      immutable: true,
      stringData: { a: "1" },
    });
    expect(
      await refusal(() => secretClient.patch("frozen", { stringData: { a: "2" } }, { type: "merge" })),
    ).toBe('422 Secret "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set');
    expect((await secretClient.get("frozen")).data).toEqual(frozen.data);
  });
});

describe("Service ports", () => {
  const serviceClient = client.resource(services, "default");
  const selector = { app: "web" };
  let refused = 0;

  it.each<[string, NonNullable<Service["spec"]>, string]>([
    ["no ports", { selector }, "spec.ports: Required value"],
    [
      "two unnamed ports on the same port",
      { selector, ports: [{ port: 80 }, { port: 80 }] },
      '[spec.ports[0].name: Required value, spec.ports[1].name: Required value, spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}]',
    ],
    [
      "a name twice",
      {
        selector,
        ports: [
          { name: "web", port: 80 },
          { name: "web", port: 81 },
        ],
      },
      'spec.ports[1].name: Duplicate value: "web"',
    ],
    [
      "port 0 and an unknown protocol",
      { selector, ports: [{ port: 0, protocol: "HTTP" }] },
      '[spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP", spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive]',
    ],
    [
      "a target port name that is not an IANA service name",
      { selector, ports: [{ port: 80, targetPort: "Web--Port-Too-Long" }] },
      '[spec.ports[0].targetPort: Invalid value: "Web--Port-Too-Long": must be no more than 15 characters, spec.ports[0].targetPort: Invalid value: "Web--Port-Too-Long": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), spec.ports[0].targetPort: Invalid value: "Web--Port-Too-Long": must not contain consecutive hyphens]',
    ],
  ])("refuses %s", async (_name, spec, detail) => {
    const name = `ports-${refused++}`;
    expect(await refusal(() => serviceClient.create({ metadata: { name }, spec }))).toBe(
      `422 Service "${name}" is invalid: ${detail}`,
    );
  });

  it("lets a headless Service or an ExternalName go without ports, and one port without a name", async () => {
    await serviceClient.create({ metadata: { name: "headless" }, spec: { clusterIP: "None", selector } });
    await serviceClient.create({
      metadata: { name: "external" },
      spec: { type: "ExternalName", externalName: "example.com" },
    });
    const one = await serviceClient.create({
      metadata: { name: "one" },
      spec: { selector, ports: [{ port: 80, targetPort: "http" }] },
    });
    expect(one.spec?.ports).toEqual([{ port: 80, protocol: "TCP", targetPort: "http" }]);
  });
});
