/**
 * Whether a server bound to loopback should answer a request with this
 * `Host`: an IP literal or `localhost` only, so that a web page cannot reach
 * it through a DNS name that resolves to 127.0.0.1 (DNS rebinding). For
 * the servers that sit beside a client: a manager's health port, a
 * dashboard.
 */
export function loopbackHostAllowed(host: string | undefined): boolean {
  if (host === undefined) return true;
  const name = host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.replace(/:\d+$/, "");
  return name === "localhost" || /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.includes(":");
}
