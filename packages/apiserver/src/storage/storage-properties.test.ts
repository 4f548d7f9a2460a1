import { type KubeObject, type ObjectList, type Pod, pods, type WatchEvent } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiServer } from "../api-server.js";
import { MemoryStorage } from "./memory-storage.js";
import type { WatchChannel } from "./watch-channel.js";

type Operation =
  | { kind: "create" | "delete"; name: string }
  | { kind: "update"; name: string; value: string }
  | { kind: "list" };

const names = ["a", "b", "c", "d"];
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), name: fc.constantFrom(...names) }),
  fc.record({
    kind: fc.constant("update" as const),
    name: fc.constantFrom(...names),
    value: fc.constantFrom("x", "y", "z"),
  }),
  fc.record({ kind: fc.constant("delete" as const), name: fc.constantFrom(...names) }),
  fc.record({ kind: fc.constant("list" as const) }),
);

function pod(name: string, value = ""): Pod {
  return { metadata: { name, labels: { value } }, spec: { containers: [{ name: "c", image: "x" }] } };
}

/** name → resourceVersion: what a list shows, compactly. */
function stateOf(items: KubeObject[]): Record<string, string> {
  const state: Record<string, string> = {};
  for (const item of items) state[item.metadata!.name!] = item.metadata!.resourceVersion!;
  return state;
}

/** Reads events until one at or past `until` has been seen; returns them all. */
async function readUntil(watch: AsyncIterable<WatchEvent<Pod>>, until: number, controller: AbortController) {
  const events: WatchEvent<Pod>[] = [];
  for await (const event of watch) {
    events.push(event);
    if (Number((event.object as KubeObject).metadata?.resourceVersion) >= until) break;
  }
  controller.abort();
  return events;
}

function apply(state: Record<string, string>, events: WatchEvent<Pod>[]): Record<string, string> {
  const next = { ...state };
  for (const event of events) {
    const meta = (event.object as KubeObject).metadata!;
    if (event.type === "DELETED") delete next[meta.name!];
    else next[meta.name!] = meta.resourceVersion!;
  }
  return next;
}

describe("storage invariants under random interleavings", () => {
  it("resourceVersions strictly increase; list at V plus a watch from V reproduces the final list; a resumed watch neither loses nor duplicates", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 40 }),
        fc.nat(),
        async (operations, cut) => {
          const server = new ApiServer({ clock: new FakeClock(), garbageCollection: false });
          const client = server.client().resource(pods, "default");
          try {
            const starts: ObjectList<Pod>[] = [await client.list()];
            const model = new Map<string, Pod>();
            let last = Number(starts[0]!.metadata.resourceVersion);
            for (const op of operations) {
              let written: KubeObject | undefined;
              try {
                if (op.kind === "create") written = await client.create(pod(op.name));
                else if (op.kind === "update") {
                  const current = model.get(op.name);
                  if (current)
                    written = await client.update({
                      ...current,
                      metadata: { ...current.metadata, labels: { value: op.value } },
                    });
                } else if (op.kind === "delete") {
                  if (model.has(op.name)) {
                    const result = await client.delete(op.name);
                    written = result.kind === "object" ? result.object : undefined;
                  }
                } else {
                  const list = await client.list();
                  expect(stateOf(list.items)).toEqual(stateOf([...model.values()]));
                  starts.push(list);
                }
              } catch (error) {
                // Only the expected refusal: creating what exists.
                expect(op.kind === "create" && model.has(op.name)).toBe(true);
                expect((error as { reason?: string }).reason).toBe("AlreadyExists");
                continue;
              }
              if (written === undefined) continue;
              const rv = Number(written.metadata?.resourceVersion);
              if (op.kind === "update" && model.get(op.name)?.metadata?.labels?.value === op.value) {
                // An update that changes nothing writes nothing: the version stays.
                expect(rv).toBe(Number(model.get(op.name)?.metadata?.resourceVersion));
                continue;
              }
              expect(rv).toBeGreaterThan(last);
              last = rv;
              if (op.kind === "delete") model.delete(op.name);
              else if (op.kind !== "list") model.set(op.name, written as Pod);
            }
            const final = stateOf((await client.list()).items);
            expect(final).toEqual(stateOf([...model.values()]));
            for (const start of starts) {
              const from = Number(start.metadata.resourceVersion);
              if (from >= last) {
                expect(stateOf(start.items)).toEqual(final);
                continue;
              }
              const controller = new AbortController();
              const watch = await client.watch({ resourceVersion: String(from), signal: controller.signal });
              const events = await readUntil(watch, last, controller);
              expect(apply(stateOf(start.items), events)).toEqual(final);
              // The same events, read in two watches: the second resumed from the last version the first saw.
              const split = cut % events.length;
              const firstController = new AbortController();
              const first = await client.watch({
                resourceVersion: String(from),
                signal: firstController.signal,
              });
              const head: WatchEvent<Pod>[] = [];
              if (split > 0) {
                for await (const event of first) {
                  head.push(event);
                  if (head.length === split) break;
                }
              }
              firstController.abort();
              const resumeFrom =
                split > 0 ? (head.at(-1)!.object as KubeObject).metadata!.resourceVersion! : String(from);
              const secondController = new AbortController();
              const second = await client.watch({
                resourceVersion: resumeFrom,
                signal: secondController.signal,
              });
              const tail = await readUntil(second, last, secondController);
              const describe = (e: WatchEvent<Pod>) =>
                `${e.type} ${(e.object as KubeObject).metadata?.name}@${(e.object as KubeObject).metadata?.resourceVersion}`;
              expect([...head, ...tail].map(describe)).toEqual(events.map(describe));
            }
          } finally {
            await server.close();
          }
        },
      ),
      {
        numRuns: 60,
        examples: [
          [
            [
              { kind: "create", name: "a" },
              { kind: "update", name: "a", value: "x" },
              { kind: "update", name: "a", value: "x" },
            ],
            0,
          ],
        ],
      },
    );
  });

  it("a list at any revision still in the history equals the state the writes had produced by then", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 2, max: 30 }),
        async (operations, historySize) => {
          const storage = new MemoryStorage({ historySize });
          const states: Record<string, string>[] = [{}]; // states[r] = the state at revision r
          let current: Record<string, string> = {};
          for (const op of operations) {
            const key = `/core/pods/ns/${op.kind === "list" ? "a" : op.name}`;
            const name = op.kind === "list" ? "a" : op.name;
            const exists = name in current;
            let written: KubeObject | undefined;
            if (op.kind === "create" && !exists) written = await storage.create(key, { metadata: { name } });
            else if (op.kind === "update" && exists)
              written = await storage.update(key, { metadata: { name, labels: { v: op.value } } });
            else if (op.kind === "delete" && exists) written = await storage.delete(key);
            if (written === undefined) continue;
            current = { ...current };
            if (op.kind === "delete") delete current[name];
            else current[name] = written.metadata!.resourceVersion!;
            states.push(current);
          }
          const latest = states.length - 1;
          for (let revision = 0; revision <= latest; revision++) {
            if (revision < storage.compactedRevision) {
              await expect(storage.list("/core/pods/", { revision })).rejects.toThrow(
                /too old resource version/,
              );
            } else {
              const list = await storage.list("/core/pods/", { revision });
              expect(stateOf(list.items)).toEqual(states[revision]);
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("a watcher closed for falling behind resumes from the last version it read and misses nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(operation, fc.nat({ max: 3 })), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        async (steps, bufferSize) => {
          const storage = new MemoryStorage({ watchBufferSize: bufferSize });
          const written: string[] = [];
          const seen: string[] = [];
          let lastSeen = 0;
          const open = (fromRevision: number) =>
            storage.watch("/core/pods/", { fromRevision }) as WatchChannel;
          let watcher = open(0);
          const read = (count: number) => {
            for (let i = 0; i < count; i++) {
              const event = watcher.poll();
              if (event?.type === "ERROR") {
                // Closed for falling behind: the ERROR comes last, and says so.
                expect(event.error?.storageCode).toBe("WatcherTooSlow");
                expect(watcher.poll()).toBeUndefined();
                continue;
              }
              if (event === undefined) {
                if (!watcher.closed) return;
                // Closed for falling behind: resume from the last version read.
                watcher = open(lastSeen);
                continue;
              }
              lastSeen = event.revision;
              seen.push(`${event.type}@${event.revision}`);
            }
          };
          const present = new Set<string>();
          for (const [op, reads] of steps) {
            if (op.kind !== "list") {
              const key = `/core/pods/ns/${op.name}`;
              if (op.kind === "create" && !present.has(op.name)) {
                const o = await storage.create(key, { metadata: { name: op.name } });
                present.add(op.name);
                written.push(`ADDED@${o.metadata!.resourceVersion}`);
              } else if (op.kind === "update" && present.has(op.name)) {
                const o = await storage.update(key, { metadata: { name: op.name } });
                written.push(`MODIFIED@${o.metadata!.resourceVersion}`);
              } else if (op.kind === "delete" && present.has(op.name)) {
                const o = await storage.delete(key);
                present.delete(op.name);
                written.push(`DELETED@${o.metadata!.resourceVersion}`);
              }
            }
            read(reads);
          }
          read(written.length + 2);
          watcher.stop();
          expect(seen).toEqual(written);
        },
      ),
      { numRuns: 100 },
    );
  });
});
