import { FakeClock } from "@reconcile/clock";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { type ListeningApiServer, listen } from "./server.js";

// YAML request bodies as kube-apiserver takes them: `application/yaml` on
// create and update, YAML apply patches, YAML 1.1 scalars as sigs.k8s.io/yaml
// (go-yaml v2) reads them, and a clear 400 for what is not one document.

const running: { api: ApiServer; http: ListeningApiServer }[] = [];
afterEach(async () => {
  for (const { api, http } of running.splice(0)) {
    await http.close();
    await api.close();
  }
});

async function start() {
  const api = new ApiServer({ clock: new FakeClock(Date.parse("2026-01-01T00:00:00Z")) });
  const http = await listen(api, {});
  running.push({ api, http });
  return http.url;
}

// biome-ignore lint/suspicious/noExplicitAny: JSON answers read loosely, asserted exactly
type Answer = Record<string, any>;

async function send(
  url: string,
  method: string,
  path: string,
  body: string,
  contentType = "application/yaml",
) {
  const response = await fetch(url + path, { method, body, headers: { "content-type": contentType } });
  return { code: response.status, body: (await response.json()) as Answer };
}

const configMaps = "/api/v1/namespaces/default/configmaps";

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels:
    tier: web   # a comment
data:
  mode: "0755"
  when: 2024-05-01T10:00:00Z
  enabled: "on"
`;

describe("YAML request bodies", () => {
  it("a create and an update in application/yaml store what the JSON would", async () => {
    const url = await start();
    const created = await send(url, "POST", configMaps, configMap);
    expect(created.code).toBe(201);
    expect(created.body.metadata.labels).toEqual({ tier: "web" });
    // An unquoted timestamp stays a string; quoted values stay as written.
    expect(created.body.data).toEqual({ mode: "0755", when: "2024-05-01T10:00:00Z", enabled: "on" });
    const updated = await send(
      url,
      "PUT",
      `${configMaps}/settings`,
      `${configMap.replace('  enabled: "on"\n', "")}  extra: |\n    line one\n    line two\n`,
    );
    expect(updated.code).toBe(200);
    expect(updated.body.data).toEqual({
      mode: "0755",
      when: "2024-05-01T10:00:00Z",
      extra: "line one\nline two\n",
    });
  });

  it("reads YAML 1.1 scalars as go-yaml v2: on/yes are booleans, 0755 is octal", async () => {
    const url = await start();
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 010
  paused: yes
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: main, image: nginx}]
`;
    const created = await send(url, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment);
    expect(created.code).toBe(201);
    expect([created.body.spec.replicas, created.body.spec.paused]).toEqual([8, true]);
  });

  it("a key given twice takes its last value and is reported as JSON's are: a warning, or a 400 under Strict", async () => {
    const url = await start();
    const body = "metadata:\n  name: twice\ndata:\n  a: one\n  a: two\n";
    const response = await fetch(url + configMaps, {
      method: "POST",
      body,
      headers: { "content-type": "application/yaml" },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("warning")).toBe('299 - "duplicate field \\"data.a\\""');
    expect(((await response.json()) as Answer).data).toEqual({ a: "two" });
    const strict = await send(
      url,
      "POST",
      `${configMaps}?fieldValidation=Strict`,
      body.replace("twice", "strict"),
    );
    expect([strict.code, strict.body.message]).toEqual([
      400,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a"',
    ]);
  });

  it("takes a YAML apply patch", async () => {
    const url = await start();
    const applied = await send(
      url,
      "PATCH",
      `${configMaps}/settings?fieldManager=yaml-client`,
      configMap,
      "application/apply-patch+yaml",
    );
    expect(applied.code).toBe(201);
    expect(applied.body.metadata.managedFields[0]).toMatchObject({
      manager: "yaml-client",
      operation: "Apply",
    });
    expect(applied.body.data.mode).toBe("0755");
    // A JSON apply patch (kubectl's) is read as JSON, leading blanks and all.
    const json = await send(
      url,
      "PATCH",
      `${configMaps}/json?fieldManager=kubectl`,
      `  ${JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "json" }, data: { a: "1" } })}`,
      "application/apply-patch+yaml",
    );
    expect([json.code, json.body.data]).toEqual([201, { a: "1" }]);
  });

  it("what is not one document of JSON values is a 400 naming why; nothing is stored", async () => {
    const url = await start();
    const cases = [
      ["a: [1\n", "error converting YAML to JSON: yaml: line 2: "],
      [
        `${configMap}---\n${configMap}`,
        "the request body holds more than one YAML document: send one object per request",
      ],
      [
        "metadata: {name: x}\ndata: {a: !!binary aGk=}\n",
        "error converting YAML to JSON: data.a: a binary value has no JSON form",
      ],
      [
        "metadata: {name: x}\ndata: {a: .inf}\n",
        "error converting YAML to JSON: data.a: Infinity has no JSON form",
      ],
      ["", "the request body is empty"],
    ] as const;
    for (const [body, message] of cases) {
      const answer = await send(url, "POST", configMaps, body);
      expect([answer.code, answer.body.reason]).toEqual([400, "BadRequest"]);
      expect(answer.body.message).toContain(message);
    }
    const unsupported = await send(url, "POST", configMaps, configMap, "text/yaml");
    expect([unsupported.code, unsupported.body.message]).toEqual([
      415,
      "the body of the request was in an unknown format (text/yaml) - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ]);
    const list = (await (await fetch(url + configMaps)).json()) as Answer;
    expect(list.items).toEqual([]);
  });
});

describe("YAML responses", () => {
  it("a client asking for application/yaml first gets YAML as kube-apiserver writes it", async () => {
    const url = await start();
    await send(url, "POST", configMaps, configMap);
    const read = (path: string, accept: string) => fetch(url + path, { headers: { accept } });
    const one = await read(`${configMaps}/settings`, "application/yaml");
    expect(one.headers.get("content-type")).toBe("application/yaml");
    const text = await one.text();
    // Keys sorted, strings YAML 1.1 would misread quoted, as sigs.k8s.io/yaml writes them.
    expect(text.replace(/(uid|resourceVersion|creationTimestamp|time): .*/g, "$1: X")).toBe(`apiVersion: v1
data:
  enabled: "on"
  mode: "0755"
  when: "2024-05-01T10:00:00Z"
kind: ConfigMap
metadata:
  creationTimestamp: X
  labels:
    tier: web
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        .: {}
        f:enabled: {}
        f:mode: {}
        f:when: {}
      f:metadata:
        f:labels:
          .: {}
          f:tier: {}
    manager: node
    operation: Update
    time: X
  name: settings
  namespace: default
  resourceVersion: X
  uid: X
`);
    const list = await read(configMaps, "application/yaml, application/json");
    expect(list.headers.get("content-type")).toBe("application/yaml");
    // A built-in kind's list items carry no apiVersion or kind, as in JSON.
    expect(await list.text()).toMatch(/^apiVersion: v1\nitems:\n- data:\n {4}enabled: "on"\n/);
    const missing = await read(`${configMaps}/nope`, "application/yaml");
    expect([missing.status, await missing.text()]).toEqual([
      404,
      `apiVersion: v1
code: 404
details:
  kind: configmaps
  name: nope
kind: Status
message: configmaps "nope" not found
metadata: {}
reason: NotFound
status: Failure
`,
    ]);
    const json = await read(`${configMaps}/settings`, "application/json, application/yaml");
    expect(json.headers.get("content-type")).toBe("application/json");
  });
});
