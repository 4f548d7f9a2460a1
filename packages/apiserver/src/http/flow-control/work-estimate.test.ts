import { describe, expect, it } from "vitest";
import { requestAttributes } from "../auth/request-auth.js";
import type { RequestDigest } from "./classify.js";
import { estimateWork, type ObjectCount, WatchTracker } from "./work-estimate.js";

const user = { username: "u", groups: [] };

/** The digest of `method uri`, as the filter makes it. */
function digestOf(method: string, uri: string): { digest: RequestDigest; query: URLSearchParams } {
  const url = new URL(uri);
  return {
    digest: requestAttributes(user, method, url.pathname, url.searchParams)[0]!,
    query: url.searchParams,
  };
}

interface Case {
  name: string;
  /** The method and URI; undefined for a request without RequestInfo. */
  request?: [string, string];
  count?: number;
  countError?: "not-found" | "stale" | "unknown";
  watchCount?: number;
  maxSeats?: number;
  initial: number;
  final?: number;
  latencyMs?: number;
}

// k8s.io/apiserver's util/flowcontrol/request TestWorkEstimator, case for case (a URI in place of
// its RequestInfo; the count of events.foo.bar, or of foos, as the case gives it).
const events = "http://server/apis/foo.bar/v1/events";
const foos = "http://server/apis/foo.bar/v1/foos";
const cases: Case[] = [
  { name: "request has no RequestInfo", maxSeats: 10, initial: 10 },
  { name: "request verb is not list", request: ["GET", "http://server/apis/"], maxSeats: 10, initial: 1 },
  {
    name: "request verb is list, conversion to ListOptions returns error",
    request: ["GET", `${events}?limit=invalid`],
    count: 799,
    maxSeats: 10,
    initial: 10,
  },
  {
    name: "request verb is list, has limit and resource version is 1",
    request: ["GET", `${events}?limit=399&resourceVersion=1`],
    count: 699,
    maxSeats: 10,
    initial: 8,
  },
  {
    name: "request verb is list, limit not set",
    request: ["GET", `${events}?resourceVersion=1`],
    count: 699,
    maxSeats: 10,
    initial: 7,
  },
  {
    name: "request verb is list, resource version not set",
    request: ["GET", `${events}?limit=399`],
    count: 699,
    maxSeats: 10,
    initial: 8,
  },
  {
    name: "request verb is list, no query parameters, count known",
    request: ["GET", events],
    count: 399,
    maxSeats: 10,
    initial: 8,
  },
  {
    name: "request verb is list, no query parameters, count not known",
    request: ["GET", events],
    countError: "not-found",
    maxSeats: 10,
    initial: 1,
  },
  {
    name: "request verb is list, continuation is set",
    request: ["GET", `${events}?continue=token&limit=399`],
    count: 699,
    maxSeats: 10,
    initial: 8,
  },
  {
    name: "request verb is list, resource version is zero",
    request: ["GET", `${events}?limit=299&resourceVersion=0`],
    count: 399,
    maxSeats: 10,
    initial: 4,
  },
  {
    name: "request verb is list, resource version is zero, no limit",
    request: ["GET", `${events}?resourceVersion=0`],
    count: 799,
    initial: 8,
  },
  {
    name: "request verb is list, resource version match is Exact",
    request: ["GET", `${events}?resourceVersion=foo&resourceVersionMatch=Exact&limit=399`],
    count: 699,
    maxSeats: 10,
    initial: 8,
  },
  {
    name: "request verb is list, resource version match is NotOlderThan, limit not specified",
    request: ["GET", `${events}?resourceVersion=foo&resourceVersionMatch=NotOlderThan`],
    count: 799,
    maxSeats: 10,
    initial: 8,
  },
  {
    name: "request verb is list, maximum is capped",
    request: ["GET", `${events}?resourceVersion=foo`],
    count: 1999,
    maxSeats: 10,
    initial: 10,
  },
  {
    name: "request verb is list, maximum is capped, lower max seats",
    request: ["GET", `${events}?resourceVersion=foo`],
    count: 1999,
    maxSeats: 5,
    initial: 5,
  },
  {
    name: "request verb is list, list from cache, count not known",
    request: ["GET", `${events}?resourceVersion=0&limit=799`],
    countError: "not-found",
    maxSeats: 10,
    initial: 1,
  },
  {
    name: "request verb is list, object count is stale",
    request: ["GET", `${events}?limit=499`],
    count: 799,
    countError: "stale",
    maxSeats: 10,
    initial: 10,
  },
  {
    name: "request verb is list, object count is not found",
    request: ["GET", `${events}?limit=499`],
    countError: "not-found",
    maxSeats: 10,
    initial: 1,
  },
  {
    name: "request verb is list, count getter throws unknown error",
    request: ["GET", `${events}?limit=499`],
    countError: "unknown",
    maxSeats: 10,
    initial: 10,
  },
  {
    name: "request verb is list, metadata.name specified",
    request: ["GET", `${events}?fieldSelector=metadata.name%3Dtest`],
    count: 799,
    maxSeats: 10,
    initial: 1,
  },
  {
    name: "request verb is list, metadata.name, resourceVersion and limit specified",
    request: ["GET", `${events}?fieldSelector=metadata.name%3Dtest&limit=500&resourceVersion=0`],
    count: 799,
    maxSeats: 10,
    initial: 1,
  },
  {
    name: "request verb is watch, sendInitialEvents is nil",
    request: ["GET", `${events}?watch=true`],
    count: 799,
    initial: 1,
  },
  {
    name: "request verb is watch, sendInitialEvents is false",
    request: ["GET", `${events}?watch=true&sendInitialEvents=false`],
    count: 799,
    initial: 1,
  },
  {
    name: "request verb is watch, sendInitialEvents is true",
    request: ["GET", `${events}?watch=true&sendInitialEvents=true`],
    count: 799,
    initial: 8,
  },
  {
    name: "request verb is create, no watches",
    request: ["POST", foos],
    maxSeats: 10,
    initial: 1,
    final: 0,
    latencyMs: 0,
  },
  {
    name: "request verb is create, watches registered",
    request: ["POST", foos],
    watchCount: 29,
    maxSeats: 10,
    initial: 1,
    final: 3,
    latencyMs: 5,
  },
  {
    name: "request verb is create, watches registered, no additional latency",
    request: ["POST", foos],
    watchCount: 5,
    maxSeats: 10,
    initial: 1,
    final: 0,
    latencyMs: 0,
  },
  {
    name: "request verb is create, watches registered, maximum is capped",
    request: ["POST", foos],
    watchCount: 199,
    maxSeats: 10,
    initial: 1,
    final: 10,
    latencyMs: 10,
  },
  {
    name: "request verb is update, no watches",
    request: ["PUT", `${foos}/myfoo`],
    maxSeats: 10,
    initial: 1,
    final: 0,
    latencyMs: 0,
  },
  {
    name: "request verb is update, watches registered",
    request: ["PUT", `${foos}/myfoo`],
    watchCount: 29,
    maxSeats: 10,
    initial: 1,
    final: 3,
    latencyMs: 5,
  },
  {
    name: "request verb is patch, no watches",
    request: ["PATCH", `${foos}/myfoo`],
    maxSeats: 10,
    initial: 1,
    final: 0,
    latencyMs: 0,
  },
  {
    name: "request verb is patch, watches registered",
    request: ["PATCH", `${foos}/myfoo`],
    watchCount: 29,
    maxSeats: 10,
    initial: 1,
    final: 3,
    latencyMs: 5,
  },
  {
    name: "request verb is patch, watches registered, lower max seats",
    request: ["PATCH", `${foos}/myfoo`],
    watchCount: 100,
    maxSeats: 5,
    initial: 1,
    final: 5,
    latencyMs: 10,
  },
  {
    name: "request verb is delete, no watches",
    request: ["DELETE", `${foos}/myfoo`],
    maxSeats: 10,
    initial: 1,
    final: 0,
    latencyMs: 0,
  },
  {
    name: "request verb is delete, watches registered",
    request: ["DELETE", `${foos}/myfoo`],
    watchCount: 29,
    maxSeats: 10,
    initial: 1,
    final: 3,
    latencyMs: 5,
  },
  {
    name: "creating token for service account",
    request: ["POST", "http://server/api/v1/namespaces/foo/serviceaccounts/default/token"],
    watchCount: 5777,
    maxSeats: 10,
    initial: 1,
    final: 0,
    latencyMs: 0,
  },
  {
    name: "creating service account",
    request: ["POST", "http://server/api/v1/namespaces/foo/serviceaccounts"],
    watchCount: 1000,
    maxSeats: 10,
    initial: 1,
    final: 10,
    latencyMs: 50,
  },
];

describe("estimateWork (upstream's TestWorkEstimator)", () => {
  it.each(cases)("$name", (test) => {
    const request = test.request === undefined ? undefined : digestOf(...test.request);
    const counted: string[] = [];
    const objectCount = (groupResource: string): ObjectCount => {
      counted.push(groupResource);
      if (test.countError === "unknown") throw new Error("unknown error");
      return test.countError ?? test.count ?? 0;
    };
    const work = estimateWork(request?.digest, request?.query ?? new URLSearchParams(), "testPL", {
      objectCount,
      watchCount: () => test.watchCount ?? 0,
      maxSeats: () => test.maxSeats ?? 0,
    });
    expect(work).toEqual({
      initialSeats: test.initial,
      finalSeats: test.final ?? 0,
      additionalLatencyMs: test.latencyMs ?? 0,
    });
    // A list's count is asked for its group and resource, upstream's `GroupResource.String()`.
    for (const key of counted) expect(key).toBe("events.foo.bar");
  });
});

describe("WatchTracker", () => {
  const watch = (uri: string) => digestOf("GET", `http://server${uri}`).digest;
  const write = (method: string, uri: string) => digestOf(method, `http://server${uri}`).digest;

  it("counts a write's watches: of the whole resource, of its namespace, and of its name", () => {
    const tracker = new WatchTracker();
    const forgets = [
      tracker.register(watch("/api/v1/secrets?watch=true")),
      tracker.register(watch("/api/v1/namespaces/foo/secrets?watch=true")),
      tracker.register(watch("/api/v1/namespaces/foo/secrets?watch=true&fieldSelector=metadata.name%3Dbar")),
      tracker.register(watch("/api/v1/namespaces/baz/secrets?watch=true")),
      tracker.register(watch("/apis/apps/v1/deployments?watch=true")),
    ];
    expect(forgets.every((forget) => typeof forget === "function")).toBe(true);
    expect(tracker.interestedCount(write("POST", "/api/v1/namespaces/foo/secrets"))).toBe(2);
    expect(tracker.interestedCount(write("PUT", "/api/v1/namespaces/foo/secrets/bar"))).toBe(3);
    expect(tracker.interestedCount(write("DELETE", "/api/v1/namespaces/baz/secrets/bar"))).toBe(2);
    expect(tracker.interestedCount(write("POST", "/apis/apps/v1/namespaces/foo/deployments"))).toBe(1);
    // Reads are heard by nobody; neither is a write of another group's resource of the same name.
    expect(tracker.interestedCount(write("GET", "/api/v1/namespaces/foo/secrets/bar"))).toBe(0);
    expect(tracker.interestedCount(write("POST", "/apis/example.com/v1/namespaces/foo/secrets"))).toBe(0);
    forgets[0]!();
    forgets[0]!();
    expect(tracker.interestedCount(write("PUT", "/api/v1/namespaces/foo/secrets/bar"))).toBe(2);
    for (const forget of forgets) forget!();
    expect(tracker.interestedCount(write("PUT", "/api/v1/namespaces/foo/secrets/bar"))).toBe(0);
  });

  it("does not count a watch of one node's pods, nor a request that is no watch", () => {
    const tracker = new WatchTracker();
    expect(tracker.register(watch("/api/v1/pods"))).toBeUndefined();
    tracker.register(watch("/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode1"));
    expect(tracker.interestedCount(write("POST", "/api/v1/namespaces/foo/pods"))).toBe(0);
    // Watches of unscheduled pods (an empty node name), and of pods not on a node, are counted.
    tracker.register(watch("/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3D"));
    tracker.register(watch("/api/v1/pods?watch=true&fieldSelector=spec.nodeName!%3Dnode1"));
    tracker.register(watch("/api/v1/pods?watch=true"));
    expect(tracker.interestedCount(write("POST", "/api/v1/namespaces/foo/pods"))).toBe(3);
  });
});
