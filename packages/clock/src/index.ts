export { listenAbort } from "./abort-listeners.js";
export { type Clock, realClock, sleepOn, sleepUnlessAborted, type TimerHandle } from "./clock.js";
export { FakeClock, type PendingTimer } from "./fake-clock.js";
export { type Random, randomInt, realRandom, seededRandom, uuidFrom } from "./random.js";
