import { createHash, type Hash } from "node:crypto";
import { describeFault, type Fault } from "./faults.js";

/** One thing that happened in a run, at a virtual time (ms since the run started). */
export type TraceEntry =
  | {
      readonly t: number;
      readonly type: "call";
      readonly component: string;
      /** The component's count of API calls when this one started (its decision point); -1 for discovery. */
      readonly index: number;
      readonly verb: string;
      readonly resource: string;
      /** `namespace/name`, `namespace/` for a namespace's collection, or "" for all. */
      readonly target: string;
      /** The HTTP code of the answer, or the error's. */
      readonly code: number;
      /** The resourceVersion of the object written or the list read. */
      readonly rv?: string | undefined;
      /** The error's reason. */
      readonly reason?: string | undefined;
      /** `namespace/name` of the written object's controller: whose reconcile made the write. */
      readonly owner?: string | undefined;
    }
  | {
      readonly t: number;
      readonly type: "event";
      readonly component: string;
      /** The component's count of watch events (its decision point). */
      readonly index: number;
      readonly resource: string;
      readonly event: string;
      readonly target: string;
      readonly rv: string;
    }
  | {
      readonly t: number;
      readonly type: "reconcile";
      readonly component: string;
      readonly controller: string;
      readonly key: string;
      readonly reason: string | undefined;
      readonly outcome: string;
      readonly error?: string | undefined;
      /** The informer delivery that queued it: `MODIFIED pods default/web-1 rv 42`. */
      readonly trigger?: string | undefined;
    }
  | {
      readonly t: number;
      readonly type: "fault";
      readonly fault: Fault;
      /** The call or event it struck, when it struck one. */
      readonly on?: string | undefined;
    }
  | {
      readonly t: number;
      readonly type: "lifecycle";
      readonly component: string;
      readonly what: "start" | "crash" | "stop";
      readonly incarnation: number;
    }
  | { readonly t: number; readonly type: "note"; readonly text: string };

/**
 * The record of a run: every API request and answer with its
 * resourceVersion, every watch event delivered to each component, every
 * reconcile with its reason and outcome, every fault and restart. Its hash
 * is the run's fingerprint: the same seed and code give the same hash.
 */
export class Trace {
  readonly entries: TraceEntry[] = [];
  readonly #hash: Hash = createHash("sha256");
  readonly #keep: boolean;
  #count = 0;

  /** @param keep keep the entries (for a story); without, only the hash and count are kept. */
  constructor(keep = true) {
    this.#keep = keep;
  }

  /**
   * The behaviours the run reached, each once: every (component, controller,
   * reason, outcome) of a reconcile and every (component, verb, resource,
   * code) of a failed call. The coverage-guided explorer keeps runs that add one.
   */
  readonly coverage = new Set<string>();

  add(entry: TraceEntry): void {
    this.#hash.update(JSON.stringify(entry));
    this.#hash.update("\n");
    this.#count++;
    if (this.#keep) this.entries.push(entry);
    if (entry.type === "reconcile") {
      this.coverage.add(`${entry.component} ${entry.controller} ${entry.reason} ${entry.outcome}`);
    } else if (entry.type === "call" && entry.code >= 300) {
      this.coverage.add(`${entry.component} ${entry.verb} ${entry.resource} ${entry.code}`);
    } else if (entry.type === "lifecycle" && entry.what === "crash") {
      this.coverage.add(`${entry.component} crash`);
    }
  }

  get length(): number {
    return this.#count;
  }

  /** The sha256 of the entries as JSON lines, in hex. Call once, at the end. */
  digest(): string {
    return this.#hash.digest("hex");
  }
}

/** One entry as a line of a story: `+12.345s kube-controller-manager create pods default/web-x → 201 rv 42`. */
export function describeEntry(entry: TraceEntry): string {
  const at = `+${(entry.t / 1000).toFixed(3)}s`;
  switch (entry.type) {
    case "call": {
      const answer =
        entry.code < 300
          ? `${entry.code}${entry.rv ? ` rv ${entry.rv}` : ""}`
          : `${entry.code} ${entry.reason ?? ""}`;
      return `${at} ${entry.component} ${entry.verb} ${entry.resource} ${entry.target} → ${answer.trim()}`;
    }
    case "event":
      return `${at} ${entry.component} sees ${entry.event} ${entry.resource} ${entry.target} rv ${entry.rv}`;
    case "reconcile": {
      const why = entry.reason === undefined ? "" : ` (${entry.reason})`;
      const error = entry.error === undefined ? "" : `: ${entry.error}`;
      return `${at} ${entry.component} reconciles ${entry.controller} ${entry.key}${why} → ${entry.outcome}${error}`;
    }
    case "fault":
      return `${at} FAULT ${describeFault(entry.fault)}${entry.on === undefined ? "" : ` on ${entry.on.trim()}`}`;
    case "lifecycle":
      return `${at} ${entry.component} ${entry.what}${entry.what === "start" ? ` (incarnation ${entry.incarnation})` : ""}`;
    case "note":
      return `${at} ${entry.text}`;
  }
}

/**
 * The last `lines` entries before the end as a story, watch events left out
 * unless `events` (they are most of a trace and least of its meaning).
 */
export function story(
  entries: readonly TraceEntry[],
  options: { lines?: number; events?: boolean } = {},
): string {
  const shown = entries.filter((e) => options.events || e.type !== "event");
  return shown
    .slice(-(options.lines ?? 60))
    .map(describeEntry)
    .join("\n");
}
