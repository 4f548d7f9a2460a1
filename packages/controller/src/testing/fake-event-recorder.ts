import type { DeepReadonly, KubeObject } from "@reconcile/api";
import type { ObjectReference } from "kubernetes-types/core/v1.js";
import type { EventRecorder, EventType } from "../event-recorder.js";

/** An {@link EventRecorder} that keeps `"<type> <reason> <message>"` strings (client-go's `FakeRecorder`). */
export class FakeEventRecorder implements EventRecorder {
  readonly events: string[] = [];

  event(
    _object: KubeObject | DeepReadonly<KubeObject> | ObjectReference,
    type: EventType,
    reason: string,
    message: string,
  ): void {
    this.events.push(`${type} ${reason} ${message}`);
  }
}
