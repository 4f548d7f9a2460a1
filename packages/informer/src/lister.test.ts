import {
  isNotFound,
  type Namespace,
  namespaces,
  type Pod,
  parseSelector,
  pods,
  StatusError,
} from "@reconcile/api";
import { pod as buildPod } from "@reconcile/api/testing";
import { describe, expect, it } from "vitest";
import { createLister } from "./lister.js";
import { createIndexer } from "./store.js";

const pod = (namespace: string, name: string, labels: Record<string, string> = {}): Pod =>
  buildPod(name, { namespace, labels });

function names(objects: readonly { metadata?: { name?: string } }[]): string[] {
  return objects.map((o) => o.metadata!.name!).sort();
}

describe("Lister", () => {
  const indexer = createIndexer<Pod>();
  indexer.add(pod("a", "web-1", { app: "web", tier: "front" }));
  indexer.add(pod("a", "db-1", { app: "db" }));
  indexer.add(pod("b", "web-2", { app: "web" }));
  indexer.add(pod("b", "bare"));
  const lister = createLister(indexer, pods);

  it("lists everything without a selector or with an empty one", () => {
    expect(names(lister.list())).toEqual(["bare", "db-1", "web-1", "web-2"]);
    expect(names(lister.list(""))).toEqual(["bare", "db-1", "web-1", "web-2"]);
  });

  it.each([
    { selector: "app=web", expected: ["web-1", "web-2"] },
    { selector: "app!=web", expected: ["bare", "db-1"] },
    { selector: "app in (web,db),tier", expected: ["web-1"] },
    { selector: "!app", expected: ["bare"] },
  ])("lists objects matching $selector", ({ selector, expected }) => {
    expect(names(lister.list(selector))).toEqual(expected);
    expect(names(lister.list(parseSelector(selector)))).toEqual(expected);
  });

  it("lists one namespace through the namespace index", () => {
    expect(names(lister.byNamespace("a").list())).toEqual(["db-1", "web-1"]);
    expect(names(lister.byNamespace("b").list("app=web"))).toEqual(["web-2"]);
    expect(lister.byNamespace("none").list()).toEqual([]);
    expect(names(lister.byNamespace("").list("app=web"))).toEqual(["web-1", "web-2"]);
  });

  it("lists one namespace by a full scan when the namespace index is missing", () => {
    const plain = createIndexer<Pod>({ namespaceIndex: false });
    plain.add(pod("a", "x"));
    plain.add(pod("b", "y"));
    expect(names(createLister(plain, pods).byNamespace("b").list())).toEqual(["y"]);
  });

  it("gets by key and by namespace and name", () => {
    expect(lister.get("a/web-1").metadata?.name).toBe("web-1");
    expect(lister.byNamespace("b").get("bare").metadata?.namespace).toBe("b");
  });

  it("throws a NotFound StatusError naming the resource for a missing object", () => {
    let error: unknown;
    try {
      lister.byNamespace("a").get("nope");
    } catch (e) {
      error = e;
    }
    expect(StatusError.isInstance(error)).toBe(true);
    expect(isNotFound(error)).toBe(true);
    expect((error as StatusError).message).toBe('pods "nope" not found');
    expect(() => lister.get("b/nope")).toThrow('pods "nope" not found');
  });

  it("gets cluster-scoped objects by name", () => {
    const ns = createIndexer<Namespace>();
    ns.add({ metadata: { name: "kube-system" } });
    const nsLister = createLister(ns, namespaces);
    expect(nsLister.get("kube-system").metadata?.name).toBe("kube-system");
    expect(() => nsLister.get("default")).toThrow('namespaces "default" not found');
  });

  it("rejects an invalid selector string with the parser's error", () => {
    expect(() => lister.list("app in (")).toThrow("invalid label selector");
  });
});
