import * as http from "node:http";
import * as https from "node:https";
import { type Random, randomInt, seededRandom } from "@reconcile/clock";
import { builtinCorpus, type CorpusEntry, reviewCorpus } from "./mutation-corpus.js";

export type { CorpusEntry } from "./mutation-corpus.js";
export { builtinCorpus } from "./mutation-corpus.js";

/** What {@link mutationFuzz} sends to, and how much. */
export interface MutationFuzzOptions {
  /** The server's URL, as `listen()` answers it (`http://…` or `https://…`). */
  readonly url: string;
  /** The bearer token of a user who may do anything (the server's admin token). */
  readonly token?: string | undefined;
  /** The CA to trust for HTTPS. */
  readonly ca?: string | undefined;
  /** The same seed sends the same requests. */
  readonly seed: number;
  /** How many requests to send (the valid writes that set up a mutated one count too). */
  readonly requests: number;
  /** The namespace written to; made if absent. Default `fuzz`. */
  readonly namespace?: string | undefined;
  /** The valid objects mutated. Default: {@link builtinCorpus}. */
  readonly corpus?: readonly CorpusEntry[] | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** An answer that no request may get: a 5xx, or a failure without a Status body. */
export interface FuzzFailure {
  readonly method: string;
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: string | undefined;
  readonly code: number;
  readonly answer: string;
}

export interface MutationFuzzReport {
  readonly requests: number;
  /** How many answers had each status code. */
  readonly codes: Readonly<Record<string, number>>;
  readonly failures: readonly FuzzFailure[];
}

/**
 * A seeded mutation fuzzer over every write route of a running server:
 * valid objects of every kind (the corpus) are mutated (values of the wrong
 * type, odd strings and numbers, removed and added keys, patch directives,
 * duplicated and emptied lists) and sent as creates, updates, the four patch
 * types, status and scale writes, deletes with options, evictions, bindings,
 * token requests, reviews and lists with odd queries. Every answer must be
 * below 500, with a Status body when it is a failure; the report lists those
 * that were not (the two 5xx kube-apiserver itself answers, a 504 for a read
 * at a resourceVersion not yet reached and a 500 for an apply with a field the
 * schema does not declare, are upstream's and not listed). `/healthz` must still
 * answer at the end.
 */
export async function mutationFuzz(options: MutationFuzzOptions): Promise<MutationFuzzReport> {
  const fuzz = new Fuzzer(options);
  try {
    return await fuzz.run();
  } finally {
    fuzz.close();
  }
}

interface Sent {
  method: string;
  path: string;
  contentType?: string | undefined;
  body?: string | undefined;
}

interface Answer {
  code: number;
  text: string;
  contentType: string;
}

class Fuzzer {
  readonly #options: MutationFuzzOptions;
  readonly #random: Random;
  readonly #namespace: string;
  readonly #corpus: readonly CorpusEntry[];
  readonly #agent: http.Agent;
  readonly #codes: Record<string, number> = {};
  readonly #failures: FuzzFailure[] = [];
  #sent = 0;

  constructor(options: MutationFuzzOptions) {
    this.#options = options;
    this.#random = seededRandom(options.seed);
    this.#namespace = options.namespace ?? "fuzz";
    this.#corpus = options.corpus ?? builtinCorpus;
    const secure = options.url.startsWith("https:");
    this.#agent = secure
      ? new https.Agent({ keepAlive: true, maxSockets: 1, ca: options.ca })
      : new http.Agent({ keepAlive: true, maxSockets: 1 });
  }

  close(): void {
    this.#agent.destroy();
  }

  async run(): Promise<MutationFuzzReport> {
    await this.#send({
      method: "POST",
      path: "/api/v1/namespaces",
      body: JSON.stringify({ metadata: { name: this.#namespace } }),
    });
    for (let i = 0; this.#sent < this.#options.requests; i++) {
      this.#options.signal?.throwIfAborted();
      await this.#step(`fz-${this.#options.seed.toString(36)}-${i}`);
      if (i % 100 === 99) await this.#health();
    }
    await this.#health();
    return { requests: this.#sent, codes: { ...this.#codes }, failures: [...this.#failures] };
  }

  /** One fuzzed request, after the valid write it needs (if any). */
  async #step(name: string): Promise<void> {
    const entry = this.#corpus[randomInt(this.#random, this.#corpus.length)]!;
    const collection = entry.collection.replace("{ns}", this.#namespace);
    const fresh = {
      ...structuredClone(entry.object),
      metadata: { ...(entry.object.metadata as object), name },
    };
    const object = entry.named?.(fresh, name) ?? fresh;
    const objectName = (object.metadata as { name: string }).name;
    const operation = this.#pick(operations);
    if (operation === "create")
      return void (await this.#send({ method: "POST", path: collection, body: json(this.#mutate(object)) }));
    if (operation === "list")
      return void (await this.#send({ method: "GET", path: `${collection}?${this.#query()}` }));
    if (operation === "review") {
      const review = this.#pick(reviewCorpus);
      return void (await this.#send({
        method: "POST",
        path: review.path,
        body: json(this.#mutate(review.object)),
      }));
    }
    // The rest act on an object that exists.
    const created = await this.#send({ method: "POST", path: collection, body: json(object) });
    if (created.code !== 201) return;
    const stored = JSON.parse(created.text) as Record<string, unknown>;
    const path = `${collection}/${objectName}`;
    switch (operation) {
      case "update": {
        const body = this.#mutate(this.#chance(0.5) ? stored : withoutVersion(stored));
        return void (await this.#send({ method: "PUT", path, body: json(body) }));
      }
      case "patch":
        return this.#patch(path, stored);
      case "subresource":
        return this.#subresource(entry, path, stored);
      case "delete": {
        const options = {
          kind: "DeleteOptions",
          apiVersion: "v1",
          gracePeriodSeconds: 0,
          propagationPolicy: "Background",
        };
        const query = this.#chance(0.5) ? `?${this.#query()}` : "";
        return void (await this.#send({
          method: "DELETE",
          path: `${path}${query}`,
          body: json(this.#mutate(options)),
        }));
      }
    }
  }

  async #patch(path: string, stored: Record<string, unknown>): Promise<void> {
    const type = this.#pick(["merge", "strategic", "json", "apply"] as const);
    if (type === "json") {
      const operations = Array.from({ length: 1 + randomInt(this.#random, 3) }, () =>
        this.#jsonPatchOperation(stored),
      );
      const body = json(this.#chance(0.3) ? this.#mutate(operations) : operations);
      return void (await this.#send({
        method: "PATCH",
        path,
        contentType: "application/json-patch+json",
        body,
      }));
    }
    const partial = this.#mutate(
      this.#chance(0.5) ? withoutVersion(stored) : { spec: stored.spec, metadata: {} },
    );
    if (type === "apply") {
      const force = this.#chance(0.5) ? "&force=true" : "";
      return void (await this.#send({
        method: "PATCH",
        path: `${path}?fieldManager=fuzz${force}`,
        contentType: "application/apply-patch+yaml",
        body: json({ apiVersion: stored.apiVersion, kind: stored.kind, ...partial }),
      }));
    }
    const contentType =
      type === "merge" ? "application/merge-patch+json" : "application/strategic-merge-patch+json";
    await this.#send({ method: "PATCH", path, contentType, body: json(partial) });
  }

  async #subresource(entry: CorpusEntry, path: string, stored: Record<string, unknown>): Promise<void> {
    const name = (stored.metadata as { name: string }).name;
    const writes: Array<() => Promise<Answer>> = [];
    if (entry.subresources?.includes("status"))
      writes.push(() =>
        this.#send({ method: "PUT", path: `${path}/status`, body: json(this.#mutate(stored)) }),
      );
    if (entry.subresources?.includes("scale")) {
      const scale = {
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        metadata: { name },
        spec: { replicas: 2 },
      };
      writes.push(() =>
        this.#send({ method: "PUT", path: `${path}/scale`, body: json(this.#mutate(scale)) }),
      );
      writes.push(() =>
        this.#send({
          method: "PATCH",
          path: `${path}/scale`,
          contentType: "application/merge-patch+json",
          body: json(this.#mutate({ spec: { replicas: 3 } })),
        }),
      );
    }
    if (entry.collection.endsWith("/pods")) {
      const eviction = { apiVersion: "policy/v1", kind: "Eviction", metadata: { name } };
      const binding = {
        apiVersion: "v1",
        kind: "Binding",
        metadata: { name },
        target: { kind: "Node", name: "n1" },
      };
      writes.push(() =>
        this.#send({ method: "POST", path: `${path}/eviction`, body: json(this.#mutate(eviction)) }),
      );
      writes.push(() =>
        this.#send({ method: "POST", path: `${path}/binding`, body: json(this.#mutate(binding)) }),
      );
    }
    if (entry.collection.endsWith("/serviceaccounts")) {
      const request = {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 3600 },
      };
      writes.push(() =>
        this.#send({ method: "POST", path: `${path}/token`, body: json(this.#mutate(request)) }),
      );
    }
    if (writes.length === 0)
      writes.push(() => this.#send({ method: "PUT", path, body: json(this.#mutate(stored)) }));
    await this.#pick(writes)();
  }

  #jsonPatchOperation(object: unknown): Record<string, unknown> {
    const paths = pointers(object);
    const path = this.#chance(0.8) ? this.#pick(paths) : this.#pick(oddPointers);
    const op = this.#pick(["add", "remove", "replace", "move", "copy", "test", "bogus"]);
    return { op, path, from: this.#pick(paths), value: this.#oddValue() };
  }

  /** A copy of `value` with one to three mutations at random places. */
  #mutate<T>(value: T): T {
    const copy = structuredClone(value) as unknown;
    let root = { value: copy } as Record<string, unknown>;
    for (let n = 1 + randomInt(this.#random, 3); n > 0; n--) root = this.#mutateOnce(root);
    return root.value as T;
  }

  #mutateOnce(root: Record<string, unknown>): Record<string, unknown> {
    const places = containers(root);
    const [container, key] = this.#pick(places);
    const kind = randomInt(this.#random, 6);
    const target = container as Record<string | number, unknown>;
    if (kind === 0 || kind === 1) target[key] = this.#oddValue();
    else if (kind === 2) {
      if (Array.isArray(container)) container.splice(key as number, 1);
      else if (container !== root) delete target[key];
    } else if (kind === 3) {
      const inner = target[key];
      if (inner !== null && typeof inner === "object" && !Array.isArray(inner))
        (inner as Record<string, unknown>)[this.#pick(oddKeys)] = this.#oddValue();
      else target[key] = [inner];
    } else if (kind === 4) {
      const inner = target[key];
      if (Array.isArray(inner)) inner.push(structuredClone(inner[0] ?? this.#oddValue()));
      else target[key] = this.#pick(oddStrings);
    } else
      target[key] = Array.isArray(target[key])
        ? []
        : { $patch: this.#pick(["delete", "replace", "merge", "x"]) };
    return root;
  }

  #oddValue(): unknown {
    return structuredClone(this.#pick(oddValues));
  }

  #query(): string {
    const params = new URLSearchParams();
    for (let n = 1 + randomInt(this.#random, 3); n > 0; n--) {
      const [key, values] = this.#pick(Object.entries(oddQuery));
      params.set(key, this.#pick(values));
    }
    return params.toString();
  }

  #pick<T>(items: readonly T[]): T {
    return items[randomInt(this.#random, items.length)]!;
  }

  #chance(p: number): boolean {
    return this.#random() < p;
  }

  async #health(): Promise<void> {
    const answer = await this.#send({ method: "GET", path: "/healthz" });
    if (answer.code !== 200)
      this.#failures.push({
        method: "GET",
        path: "/healthz",
        contentType: undefined,
        body: undefined,
        code: answer.code,
        answer: answer.text,
      });
  }

  async #send(sent: Sent): Promise<Answer> {
    this.#sent++;
    const answer = await this.#exchange(sent);
    this.#codes[answer.code] = (this.#codes[answer.code] ?? 0) + 1;
    const failed = answer.code >= 500 ? !upstreamsOwn(answer) : answer.code >= 400 && !isStatus(answer);
    if (failed) {
      this.#failures.push({
        method: sent.method,
        path: sent.path,
        contentType: sent.contentType,
        body: sent.body,
        code: answer.code,
        answer: answer.text.slice(0, 2_000),
      });
    }
    return answer;
  }

  #exchange(sent: Sent): Promise<Answer> {
    const url = new URL(sent.path, this.#options.url);
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#options.token !== undefined) headers.authorization = `Bearer ${this.#options.token}`;
    if (sent.body !== undefined) {
      headers["content-type"] = sent.contentType ?? "application/json";
      headers["content-length"] = String(Buffer.byteLength(sent.body));
    }
    const request = url.protocol === "https:" ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(url, { method: sent.method, headers, agent: this.#agent }, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({
            code: response.statusCode ?? 0,
            text,
            contentType: String(response.headers["content-type"] ?? ""),
          }),
        );
        response.on("error", reject);
      });
      req.on("error", reject);
      req.end(sent.body);
    });
  }
}

const operations = [
  "create",
  "create",
  "update",
  "patch",
  "patch",
  "subresource",
  "delete",
  "list",
  "review",
] as const;

function json(value: unknown): string {
  return JSON.stringify(value);
}

function isStatus(answer: Answer): boolean {
  if (!answer.contentType.startsWith("application/json")) return false;
  try {
    return (JSON.parse(answer.text) as { kind?: unknown }).kind === "Status";
  } catch {
    return false;
  }
}

/**
 * The 5xx kube-apiserver itself answers, which are upstream's behaviour and not faults: a 504 Timeout
 * whose cause is ResourceVersionTooLarge (a read at a resourceVersion not yet reached, after waiting for
 * its cache), and the 500 of an apply whose configuration has a field the schema does not declare
 * (`failed to create typed patch object (…): … field not declared in schema`, kubernetes#122480).
 */
function upstreamsOwn(answer: Answer): boolean {
  if (!isStatus(answer)) return false;
  const status = JSON.parse(answer.text) as {
    message?: string;
    details?: { causes?: Array<{ reason?: string }> };
  };
  if (answer.code === 504)
    return status.details?.causes?.some((cause) => cause.reason === "ResourceVersionTooLarge") ?? false;
  const message = status.message ?? "";
  return (
    answer.code === 500 &&
    message.startsWith("failed to create typed patch object (") &&
    message.endsWith("field not declared in schema")
  );
}

function withoutVersion(object: Record<string, unknown>): Record<string, unknown> {
  const { resourceVersion: _dropped, ...metadata } = object.metadata as Record<string, unknown>;
  return { ...object, metadata };
}

/** Every (container, key) pair below `root`, `root` itself included. */
function containers(root: Record<string, unknown>): Array<[object, string | number]> {
  const out: Array<[object, string | number]> = [];
  const visit = (container: object, depth: number) => {
    if (depth > 12) return;
    for (const [key, value] of Object.entries(container)) {
      const index = Array.isArray(container) ? Number(key) : key;
      out.push([container, index]);
      if (value !== null && typeof value === "object") visit(value, depth + 1);
    }
  };
  visit(root, 0);
  return out;
}

/** JSON pointers to every member of `value`. */
function pointers(value: unknown, prefix = ""): string[] {
  if (value === null || typeof value !== "object") return [prefix];
  const out = [prefix];
  for (const [key, child] of Object.entries(value))
    out.push(...pointers(child, `${prefix}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`));
  return out;
}

const oddStrings = [
  "",
  "x",
  "..",
  "a/b",
  "UPPER",
  "-lead",
  "a".repeat(300),
  "\u0000",
  "\u0001ctl",
  "ü",
  "💥",
  "0",
  "-1",
  "1.5",
  "true",
  "null",
  "1e400",
  "2026-13-45T99:99:99Z",
  "100Qi",
  "*",
  "{{x}}",
  "has space",
];

const oddValues: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2147483648,
  -9007199254740992,
  1e308,
  ...oddStrings,
  {},
  [],
  [null],
  [{}],
  { "": 1 },
  { $patch: "delete" },
  { a: { b: { c: { d: [1, { e: "f" }] } } } },
];

const oddKeys = [
  "",
  "__proto__",
  "constructor",
  "$patch",
  "$retainKeys",
  "$setElementOrder/containers",
  "$deleteFromPrimitiveList/finalizers",
  "x".repeat(300),
  "a.b",
  "a/b",
  "\u0001",
  "metadata",
  "status",
  "kind",
  "apiVersion",
  "resourceVersion",
  "uid",
  "managedFields",
  "ownerReferences",
  "finalizers",
  "deletionTimestamp",
  "generateName",
  "namespace",
  "labels",
  "annotations",
];

const oddPointers = [
  "",
  "/",
  "/-",
  "/metadata/~2",
  "/spec/containers/999",
  "/spec/containers/-1",
  "/a/b/c/d",
  "~1",
];

const oddQuery: Readonly<Record<string, readonly string[]>> = {
  labelSelector: ["app=fuzz", "a in (b", "!!", "x".repeat(70), "a,b", "a notin (b),!c"],
  fieldSelector: [
    "metadata.name=x",
    "spec.nodeName=a,status.phase!=Running",
    "bogus=1",
    "a==b=c",
    "metadata.name",
  ],
  limit: ["-1", "0", "abc", "500", "99999999999999999999"],
  continue: ["abc", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0", "%%%"],
  resourceVersion: ["0", "-1", "abc", "999999999", ""],
  resourceVersionMatch: ["Exact", "NotOlderThan", "bogus"],
  timeoutSeconds: ["-1", "abc", "1"],
  gracePeriodSeconds: ["-1", "abc", "0", "99999999999"],
  propagationPolicy: ["Orphan", "bogus", ""],
  dryRun: ["All", "bogus", ""],
  pretty: ["true", "x"],
  fieldManager: ["", "x".repeat(200), "\u0001"],
  fieldValidation: ["Strict", "Warn", "Ignore", "bogus"],
};
