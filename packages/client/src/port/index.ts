export { type PortClient, portClient } from "./port-client.js";
export type { MessagePortLike } from "./protocol.js";
export { type ServePortOptions, servePort } from "./serve-port.js";
