export { type CommandIO, ExitRequest, type ResolvedPath, type ShellHost } from "./context.js";
export { Shell } from "./interpreter.js";
