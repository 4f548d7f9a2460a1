import type { FlowController, LevelState } from "./controller.js";
import type { SeatRequest } from "./queue-set.js";

// kube-apiserver's API Priority and Fairness debug dumps
// (`/debug/api_priority_and_fairness/dump_*`): comma-separated rows aligned by
// Go's text/tabwriter, one per priority level, queue or request. Every request
// here takes one seat and no virtual time is kept (queues are served in turn),
// so seat counts are request counts, a queue's waiting work is its requests
// times upstream's 3 ms service estimate, and `NextDispatchR` is always zero.

/** Where the dumps are served, and what each shows. */
export const flowControlDumpPaths: Readonly<Record<string, "levels" | "queues" | "requests">> = {
  "/debug/api_priority_and_fairness/dump_priority_levels": "levels",
  "/debug/api_priority_and_fairness/dump_queues": "queues",
  "/debug/api_priority_and_fairness/dump_requests": "requests",
};

/** The dump a path names, as text; undefined for a path that names none. */
export function flowControlDump(
  flow: FlowController,
  pathname: string,
  query: URLSearchParams,
): string | undefined {
  switch (flowControlDumpPaths[pathname]) {
    case "levels":
      return dumpPriorityLevels(flow.levelStates());
    case "queues":
      return dumpQueues(flow.levelStates());
    case "requests":
      // Upstream asks only that the parameter be non-empty.
      return dumpRequests(flow.levelStates(), (query.get("includeRequestDetails") ?? "") !== "");
    default:
      return undefined;
  }
}

/** One row per priority level, by name. */
export function dumpPriorityLevels(levels: readonly LevelState[]): string {
  const rows = [
    [
      "PriorityLevelName",
      "ActiveQueues",
      "IsIdle",
      "IsQuiescing",
      "WaitingRequests",
      "ExecutingRequests",
      "DispatchedRequests",
      "RejectedRequests",
      "TimedoutRequests",
      "CancelledRequests",
    ],
  ];
  for (const { name, set, quiescing } of levels) {
    const { dispatched, rejected, timedOut, cancelled } = set.counts;
    rows.push([
      name,
      String(set.activeQueues),
      String(set.waiting === 0 && set.executing === 0),
      String(quiescing),
      String(set.waiting),
      String(set.executing),
      String(dispatched),
      String(rejected),
      String(timedOut),
      String(cancelled),
    ]);
  }
  return tabwrite(rows.map(row));
}

/** One row per queue of every level that has queues. */
export function dumpQueues(levels: readonly LevelState[]): string {
  const rows = [
    [
      "PriorityLevelName",
      "Index",
      "PendingRequests",
      "ExecutingRequests",
      "SeatsInUse",
      "NextDispatchR",
      "InitialSeatsSum",
      "MaxSeatsSum",
      "TotalWorkSum",
    ],
  ];
  for (const { name, set } of levels) {
    for (const queue of set.queues()) {
      rows.push([
        name,
        String(queue.index),
        String(queue.waiting.length),
        String(queue.executing),
        String(queue.seatsInUse),
        seatSeconds(queue.nextDispatchR),
        String(queue.initialSeatsSum),
        String(queue.maxSeatsSum),
        seatSeconds(queue.totalWorkSum),
      ]);
    }
  }
  return tabwrite(rows.map(row));
}

/** One row per request waiting or holding a seat; with `details`, who asked and what. */
export function dumpRequests(levels: readonly LevelState[], details: boolean): string {
  const header = row([
    "PriorityLevelName",
    "FlowSchemaName",
    "QueueIndex",
    "RequestIndexInQueue",
    "FlowDistingsher",
    "ArriveTime",
    "InitialSeats",
    "FinalSeats",
    "AdditionalLatency",
    "StartTime",
  ]);
  const detailHeader = row([
    "UserName",
    "Verb",
    "APIPath",
    "Namespace",
    "Name",
    "APIVersion",
    "Resource",
    "SubResource",
  ]);
  const lines = [details ? `${header},\t${detailHeader}` : header];
  const line = (level: string, queue: number, index: number, request: SeatRequest) => {
    const columns = [
      level,
      request.flowSchema,
      String(queue),
      String(index),
      request.flowDistinguisher,
      rfc3339Nano(request.arrived),
      String(request.work?.initialSeats ?? 1),
      String(request.work?.finalSeats ?? 0),
      goDuration(request.work?.additionalLatencyMs ?? 0),
      request.started === undefined ? zeroTime : rfc3339Nano(request.started),
    ];
    if (details) {
      const asked = request.asked?.details?.();
      columns.push(
        asked?.userName ?? "",
        asked?.verb ?? "",
        asked?.path ?? "",
        asked?.namespace ?? "",
        asked?.name ?? "",
        asked?.apiVersion ?? "",
        asked?.resource ?? "",
        asked?.subresource ?? "",
      );
    }
    lines.push(row(columns));
  };
  for (const { name, set } of levels) {
    const seated = set.seated();
    for (let queue = 0; queue < set.queueCount; queue++) {
      const waiting = set.waitingIn(queue);
      for (let index = 0; index < waiting.length; index++) line(name, queue, index, waiting[index]!);
      for (const [request, at] of seated) if (at === queue) line(name, queue, -1, request);
    }
    for (const [request, at] of seated) if (at < 0) line(name, -1, -1, request);
  }
  return tabwrite(lines);
}

/** Upstream's `row`: the columns joined by `,` and a tab. */
function row(columns: readonly string[]): string {
  return columns.join(",\t");
}

/** Go's `SeatSeconds.String()` of `units` (1e-8 seat-seconds each; below zero as the unsigned value wraps, which we do not model: shown from 0). */
function seatSeconds(units: number): string {
  const whole = Math.floor(Math.max(0, units) / 1e8);
  return `${whole}.${String(Math.max(0, units) - whole * 1e8).padStart(8, "0")}ss`;
}

/** Go's `time.Duration.String()` of a whole number of nanoseconds given in ms, as the dump prints latencies under a second. */
export function goDuration(ms: number): string {
  const ns = Math.round(ms * 1e6);
  if (ns === 0) return "0s";
  if (ns < 1000) return `${ns}ns`;
  if (ns < 1e6) return `${trimFraction(ns / 1e3)}µs`;
  if (ns < 1e9) return `${trimFraction(ns / 1e6)}ms`;
  return `${trimFraction(ns / 1e9)}s`;
}

function trimFraction(value: number): string {
  return String(Number(value.toFixed(9)));
}

/** Go's zero `time.Time` as RFC 3339. */
const zeroTime = "0001-01-01T00:00:00Z";

/** `ms` since the epoch as Go's `time.RFC3339Nano` writes it in UTC: the fraction without trailing zeros. */
export function rfc3339Nano(ms: number): string {
  const iso = new Date(ms).toISOString();
  const fraction = iso.slice(20, 23).replace(/0+$/, "");
  return `${iso.slice(0, 19)}${fraction === "" ? "" : `.${fraction}`}Z`;
}

/**
 * Go's `text/tabwriter` as the dumps use it (minimum width 8, padding 1,
 * spaces, no flags): each tab-terminated cell is padded to its column's
 * width, a column's width the widest of a run of lines that have that cell;
 * the text after a line's last tab is written as it is.
 */
export function tabwrite(lines: readonly string[]): string {
  const cells = lines.map((text) => text.split("\t"));
  const out: string[] = [];
  const widths: number[] = [];
  const write = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const line = cells[i]!;
      let text = "";
      for (let j = 0; j < line.length; j++) {
        const cell = line[j]!;
        const pad = j < line.length - 1 && j < widths.length ? widths[j]! - runes(cell) : 0;
        text += pad > 0 ? cell + " ".repeat(pad) : cell;
      }
      out.push(text);
    }
  };
  const format = (from: number, to: number) => {
    const column = widths.length;
    let start = from;
    for (let at = from; at < to; at++) {
      if (column >= cells[at]!.length - 1) continue;
      // A run of lines with a cell in this column starts here.
      write(start, at);
      start = at;
      let width = minWidth;
      for (; at < to && column < cells[at]!.length - 1; at++)
        width = Math.max(width, runes(cells[at]![column]!) + padding);
      widths.push(width);
      format(start, at);
      widths.pop();
      start = at;
      at--;
    }
    write(start, to);
  };
  format(0, cells.length);
  return out.map((text) => `${text}\n`).join("");
}

/** A cell's width as tabwriter counts it: in runes. */
function runes(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

const minWidth = 8;
const padding = 1;
