import { ageColumn, ageOf, column, type Loose, nameColumn, nameOf, type Printer } from "./columns.js";

// The `kubectl get` columns of Endpoints and EndpointSlices, as kube-apiserver's printers
// (pkg/printers/internalversion: printEndpoints, printEndpointSlice) print them in 1.32.

/** At most this many addresses (or ports) are listed, then ` + N more...`. */
const maxListed = 3;

export const endpointsPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "Endpoints",
      "string",
      "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.",
    ),
    ageColumn,
  ],
  cells(endpoints: Loose, now) {
    return [nameOf(endpoints), formatEndpoints(endpoints), ageOf(endpoints, now)];
  },
};

export const endpointSlicePrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "AddressType",
      "string",
      "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.",
    ),
    column(
      "Ports",
      "string",
      'ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates "all ports". Each slice may include a maximum of 100 ports.',
    ),
    column(
      "Endpoints",
      "string",
      "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.",
    ),
    ageColumn,
  ],
  cells(slice: Loose, now) {
    return [
      nameOf(slice),
      typeof slice.addressType === "string" ? slice.addressType : "",
      formatSlicePorts(Array.isArray(slice.ports) ? slice.ports : []),
      formatSliceEndpoints(Array.isArray(slice.endpoints) ? slice.endpoints : []),
      ageOf(slice, now),
    ];
  },
};

/**
 * `ip:port` for every ready address and port of every subset (the address
 * alone for a subset without ports), the first three, then ` + N more...`
 * (upstream's `formatEndpoints`); `<none>` without subsets.
 */
function formatEndpoints(endpoints: Loose): string {
  const subsets: Loose[] = Array.isArray(endpoints.subsets) ? endpoints.subsets : [];
  if (subsets.length === 0) return "<none>";
  const list: string[] = [];
  let count = 0;
  let more = false;
  for (const subset of subsets) {
    const addresses: Loose[] = Array.isArray(subset?.addresses) ? subset.addresses : [];
    const ports: Loose[] = Array.isArray(subset?.ports) ? subset.ports : [];
    const targets = ports.length === 0 ? [undefined] : ports;
    for (const port of targets) {
      count += addresses.length;
      for (const address of addresses) {
        if (list.length === maxListed) {
          more = true;
          break;
        }
        const ip = String(address?.ip ?? "");
        list.push(port === undefined ? ip : joinHostPort(ip, Number(port?.port ?? 0)));
      }
    }
  }
  const text = list.join(",");
  return more ? `${text} + ${count - maxListed} more...` : text;
}

/** The slice's port numbers (a name for a port without a number, `*` for neither), three at most. */
function formatSlicePorts(ports: Loose[]): string {
  const list = ports
    .slice(0, maxListed)
    .map((port) =>
      typeof port?.port === "number" ? String(port.port) : typeof port?.name === "string" ? port.name : "*",
    );
  return listWithMore(list, ports.length);
}

/** The slice's addresses, three at most. */
function formatSliceEndpoints(endpoints: Loose[]): string {
  const addresses: string[] = [];
  for (const endpoint of endpoints)
    for (const address of Array.isArray(endpoint?.addresses) ? endpoint.addresses : [])
      addresses.push(String(address));
  return listWithMore(addresses.slice(0, maxListed), addresses.length);
}

/** Upstream's `listWithMoreString`: the list, ` + N more...` past three, `<unset>` when empty. */
function listWithMore(list: string[], count: number): string {
  const text = list.join(",");
  if (count > maxListed) return `${text} + ${count - maxListed} more...`;
  return text === "" ? "<unset>" : text;
}

/** Go's `net.JoinHostPort`: an IPv6 address in brackets. */
function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
