import type { DeepReadonly, Node, Pod } from "@reconcile/api";
import { FakeClock } from "@reconcile/clock";
import type { Introspection } from "@reconcile/controller";
import { FakeEventRecorder, RecordingClient } from "@reconcile/controller/testing";
import { FakeInformer } from "@reconcile/informer/testing";
import type { Binder } from "./binder.js";
import { Scheduler } from "./scheduler.js";

// A scheduler on fake informers, a recording client and binder, and a fake clock (test helper).

export class RecordingBinder implements Binder {
  readonly bound: string[] = [];
  fail: Error | undefined;
  async bind(p: DeepReadonly<Pod>, nodeName: string): Promise<void> {
    if (this.fail) throw this.fail;
    this.bound.push(`${p.metadata?.name}→${nodeName}`);
  }
}

export function setup(
  options: {
    percentageOfNodesToScore?: number;
    random?: () => number;
    decisionLog?: number;
    introspection?: Introspection;
  } = {},
) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const client = new RecordingClient();
  const podInformer = new FakeInformer<Pod>();
  const nodeInformer = new FakeInformer<Node>();
  const recorder = new FakeEventRecorder();
  const binder = new RecordingBinder();
  const scheduler = new Scheduler({
    client,
    podInformer,
    nodeInformer,
    clock,
    binder,
    eventRecorder: recorder,
    random: options.random ?? (() => 0.99),
    decisionLog: options.decisionLog,
    introspection: options.introspection,
    ...(options.percentageOfNodesToScore !== undefined
      ? { percentageOfNodesToScore: options.percentageOfNodesToScore }
      : {}),
  });
  /** Pops and schedules every active pod, then lets bindings finish. */
  const scheduleAll = async () => {
    while (scheduler.queue.pendingPods().active > 0) {
      const info = await scheduler.queue.pop();
      scheduler.scheduleOne(info!);
      await clock.flush();
    }
  };
  return { clock, client, podInformer, nodeInformer, recorder, binder, scheduler, scheduleAll };
}
