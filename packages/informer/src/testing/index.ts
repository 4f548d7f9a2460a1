export { FakeInformer, type FakeInformerOptions } from "./fake-informer.js";
export { FakeListerWatcher, type FakeListerWatcherOptions } from "./fake-lister-watcher.js";
