import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { builtinDefinitions } from "../kinds/builtin.js";
import { ResourceDefinitions } from "../registry/definitions.js";
import { decodeKubernetesProtobuf as decodeWith, ProtobufDecodeError } from "./decode.js";

// The server names a kind's top-level message from its definition; these tests do the same.
const definitions = new ResourceDefinitions(builtinDefinitions);
const decodeKubernetesProtobuf = (body: Uint8Array) =>
  decodeWith(body, (apiVersion, kind) => definitions.forKind(apiVersion, kind)?.protobufMessage);

// Bodies captured from kubectl v1.32 (`kubectl create ...` against a logging server).
const captured = {
  namespace:
    "6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d6112001a0022002a0032003800420012001a020a001a002200",
  deployment:
    "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412bd010a1f0a0377656212001a0022002a003200380042005a0a0a036170701203776562128b010803120c0a0a0a0361707012037765621a710a1c0a0012001a0022002a003200380042005a0a0a036170701203776562125112330a056e67696e78120a6e67696e783a312e32372a00320a0a001000185022002a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200",
  deploymentWithCommand:
    "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412bd010a1f0a0361706912001a0022002a003200380042005a0a0a036170701203617069128b010801120c0a0a0a0361707012036170691a710a1c0a0012001a0022002a003200380042005a0a0a036170701203617069125112330a0762757379626f78120762757379626f781a05736c6565701a04333630302a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200",
  job: "6b3873000a0f0a0862617463682f763112034a6f621284010a120a026a3112001a0022002a00320038004200126432620a100a0012001a0022002a00320038004200124e122b0a026a31120762757379626f781a046563686f1a0268692a0042006a007200800100880100900100a201001a054e65766572320042004a0052005800600068008201008a01009a0100c201001a082000280030003a001a002200",
  configmap:
    "6b3873000a0f0a0276311209436f6e6669674d617012270a130a0363666712001a0022002a0032003800420012060a016112013112080a0162120374776f1a002200",
  secret:
    "6b3873000a0c0a0276311206536563726574122b0a120a02733112001a0022002a0032003800420012130a0870617373776f7264120768756e746572321a001a002200",
  service:
    "6b3873000a0d0a02763112075365727669636512750a250a066d792d73766312001a0022002a003200380042005a0d0a0361707012066d792d73766312480a1e0a09353637382d38303830120354435018ae2c2207080010903f1a002800120d0a0361707012066d792d7376631a002209436c757374657249503a00420052005a00600068001a020a001a002200",
};

const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, "hex"));

describe("decodeKubernetesProtobuf on bodies kubectl sends", () => {
  it.each([
    [
      "kubectl create namespace team-a",
      captured.namespace,
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" }, spec: {}, status: {} },
    ],
    [
      "kubectl create deployment web --image=nginx:1.27 --replicas=3 --port=80",
      captured.deployment,
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", labels: { app: "web" } },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: {
              containers: [
                { name: "nginx", image: "nginx:1.27", ports: [{ containerPort: 80 }], resources: {} },
              ],
            },
          },
          strategy: {},
        },
        status: {},
      },
    ],
    [
      "kubectl create deployment api --image=busybox -- sleep 3600",
      captured.deploymentWithCommand,
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "api", labels: { app: "api" } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "api" } },
          template: {
            metadata: { labels: { app: "api" } },
            spec: {
              containers: [{ name: "busybox", image: "busybox", command: ["sleep", "3600"], resources: {} }],
            },
          },
          strategy: {},
        },
        status: {},
      },
    ],
    [
      "kubectl create job j1 --image=busybox -- echo hi",
      captured.job,
      {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "j1" },
        spec: {
          template: {
            metadata: {},
            spec: {
              containers: [{ name: "j1", image: "busybox", command: ["echo", "hi"], resources: {} }],
              restartPolicy: "Never",
            },
          },
        },
        status: {},
      },
    ],
    [
      "kubectl create configmap cfg --from-literal=a=1 --from-literal=b=two",
      captured.configmap,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "1", b: "two" } },
    ],
    [
      "kubectl create secret generic s1 --from-literal=password=hunter2",
      captured.secret,
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s1" },
        data: { password: Buffer.from("hunter2").toString("base64") },
      },
    ],
    [
      "kubectl create service clusterip my-svc --tcp=5678:8080",
      captured.service,
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "my-svc", labels: { app: "my-svc" } },
        spec: {
          ports: [{ name: "5678-8080", protocol: "TCP", port: 5678, targetPort: 8080 }],
          selector: { app: "my-svc" },
          type: "ClusterIP",
        },
        status: { loadBalancer: {} },
      },
    ],
  ])("%s decodes to the JSON kubectl would have sent", (_command, hex, expected) => {
    expect(decodeKubernetesProtobuf(bytes(hex))).toEqual(expected);
  });
});

// A minimal encoder for hand-built messages.
function varint(value: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}
const tag = (number: number, wireType: number) => varint(number * 8 + wireType);
const vField = (number: number, value: number | bigint) => [...tag(number, 0), ...varint(value)];
const lField = (number: number, content: number[] | string) => {
  const data = typeof content === "string" ? [...Buffer.from(content, "utf8")] : content;
  return [...tag(number, 2), ...varint(data.length), ...data];
};
function envelope(apiVersion: string, kind: string, raw: number[]): Uint8Array {
  const typeMeta = [...lField(1, apiVersion), ...lField(2, kind)];
  return Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...lField(1, typeMeta), ...lField(2, raw)]);
}

describe("decodeKubernetesProtobuf on hand-encoded messages", () => {
  it("keeps a pointer field's zero value (replicas: 0) and drops zero non-pointer scalars", () => {
    const spec = [...vField(1, 0), ...vField(5, 0), ...vField(7, 0)];
    const raw = [...lField(1, lField(1, "zero")), ...lField(2, spec)];
    expect(decodeKubernetesProtobuf(envelope("apps/v1", "Deployment", raw))).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "zero" },
      spec: { replicas: 0 },
    });
  });

  it("decodes negative int32 and int64 varints, timestamps and string IntOrStrings", () => {
    const meta = [...lField(1, "p"), ...lField(8, vField(1, 1_700_000_000)), ...vField(10, -5)];
    const rolling = [...lField(1, [...vField(1, 1), ...lField(3, "25%")]), ...lField(2, vField(2, 2))];
    const strategy = [...lField(1, "RollingUpdate"), ...lField(2, rolling)];
    const spec = [...vField(5, -1), ...lField(4, strategy)];
    const raw = [...lField(1, meta), ...lField(2, spec)];
    expect(decodeKubernetesProtobuf(envelope("apps/v1", "Deployment", raw))).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "p", creationTimestamp: "2023-11-14T22:13:20Z", deletionGracePeriodSeconds: -5 },
      spec: {
        minReadySeconds: -1,
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: 2 } },
      },
    });
  });

  it("flattens inline messages (volume sources, probe handlers, key selectors) into their parent", () => {
    const configMapVolume = lField(19, lField(1, lField(1, "cfg")));
    const volume = [...lField(1, "config"), ...lField(2, configMapVolume)];
    const probe = [
      ...lField(1, lField(2, [...lField(1, "/healthz"), ...lField(2, vField(2, 8080))])),
      ...vField(4, 5),
    ];
    const env = [
      ...lField(1, "PASSWORD"),
      ...lField(3, lField(4, [...lField(1, lField(1, "s1")), ...lField(2, "pw")])),
    ];
    const container = [...lField(1, "app"), ...lField(2, "img"), ...lField(7, env), ...lField(10, probe)];
    const podSpec = [...lField(1, volume), ...lField(2, container), ...vField(4, 0)];
    const raw = [...lField(1, lField(1, "p")), ...lField(2, podSpec)];
    expect(decodeKubernetesProtobuf(envelope("v1", "Pod", raw))).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: {
        volumes: [{ name: "config", configMap: { name: "cfg" } }],
        containers: [
          {
            name: "app",
            image: "img",
            env: [{ name: "PASSWORD", valueFrom: { secretKeyRef: { name: "s1", key: "pw" } } }],
            livenessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 5 },
          },
        ],
        terminationGracePeriodSeconds: 0,
      },
    });
  });

  it("decodes resource quantities and skips fields it has no table for", () => {
    const limits = [...lField(1, "cpu"), ...lField(2, lField(1, "500m"))];
    const container = [...lField(1, "app"), ...lField(8, lField(1, limits)), ...lField(99, "future field")];
    const raw = [...lField(1, lField(1, "p")), ...lField(2, lField(2, container))];
    expect(decodeKubernetesProtobuf(envelope("v1", "Pod", raw))).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { containers: [{ name: "app", resources: { limits: { cpu: "500m" } } }] },
    });
  });
});

describe("decodeKubernetesProtobuf on malformed input", () => {
  it.each([
    ["an empty body", new Uint8Array(0), /does not start with the Kubernetes protobuf prefix/],
    ["a JSON body", Uint8Array.from(Buffer.from('{"kind":"Pod"}')), /does not start with/],
    ["a truncated envelope", bytes(captured.namespace).subarray(0, 30), /runs past the end|truncated/],
    [
      "an unsupported kind",
      envelope("v1", "PersistentVolume", []),
      /Kind=PersistentVolume are not supported/,
    ],
    ["an envelope without a kind", envelope("v1", "", []), /names no kind/],
    [
      "a string field sent as a varint",
      envelope("v1", "Namespace", lField(1, vField(1, 7))),
      /ObjectMeta.name \(number 1\) arrived with wire type 0/,
    ],
    [
      "invalid UTF-8 in a name",
      envelope("v1", "Namespace", lField(1, lField(1, [0xff, 0xfe]))),
      /field name is not valid UTF-8/,
    ],
    [
      "an over-long varint",
      Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...Array(11).fill(0xff)]),
      /longer than 10 bytes/,
    ],
    ["a group wire type", Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...tag(1, 3)]), /unsupported wire type 3/],
  ])("%s is rejected with a ProtobufDecodeError naming the problem", (_case, body, message) => {
    expect(() => decodeKubernetesProtobuf(body)).toThrow(ProtobufDecodeError);
    expect(() => decodeKubernetesProtobuf(body)).toThrow(message);
  });

  it("random bytes after the prefix either decode or throw a ProtobufDecodeError, nothing else", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (tail) => {
        try {
          decodeKubernetesProtobuf(Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...tail]));
        } catch (error) {
          expect(error).toBeInstanceOf(ProtobufDecodeError);
        }
      }),
    );
  });

  it("random mutations of a real deployment body either decode or throw a ProtobufDecodeError", () => {
    const original = bytes(captured.deployment);
    fc.assert(
      fc.property(fc.nat(original.length - 1), fc.integer({ min: 0, max: 255 }), (index, value) => {
        const mutated = Uint8Array.from(original);
        mutated[index] = value;
        try {
          decodeKubernetesProtobuf(mutated);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtobufDecodeError);
        }
      }),
    );
  });
});
