export * from "./client.js";
export * from "./lister-watcher.js";
