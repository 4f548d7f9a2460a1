export { FakeEventRecorder } from "./fake-event-recorder.js";
export { FakePodControl } from "./fake-pod-control.js";
export { type ClientAction, type ClientReactor, RecordingClient } from "./recording-client.js";
