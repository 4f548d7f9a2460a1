export { FakeListerWatcher, type FakeListerWatcherOptions } from "./fake-lister-watcher.js";
