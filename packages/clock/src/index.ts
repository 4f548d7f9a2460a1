export { type Clock, realClock, sleepOn, type TimerHandle } from "./clock.js";
export { FakeClock, type PendingTimer } from "./fake-clock.js";
