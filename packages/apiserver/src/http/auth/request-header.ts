import { X509Certificate } from "node:crypto";
import type * as http from "node:http";
import type { TLSSocket } from "node:tls";
import { newUnauthorized } from "@reconcile/api";
import { commonNameOf, parseCertificate, pemBlocks } from "@reconcile/api/x509";
import { allAuthenticated, type UserInfo } from "./user.js";

// kube-apiserver's request-header authenticator (`--requestheader-*`): a
// request whose client certificate chains to the front proxy's CA (and, when
// names are given, carries one of them as its CN) is the user its headers
// name — X-Remote-User, each X-Remote-Group, X-Remote-Extra-<key> — as the
// aggregator (kube-aggregator, or this server's) passes users on. It comes
// first in the authenticators, as upstream orders them.

/** How a front proxy's requests are trusted, as `extension-apiserver-authentication` carries it. */
export interface RequestHeaderOptions {
  /** The PEM CA bundle a front proxy's client certificate chains to (`requestheader-client-ca-file`). */
  clientCA: string;
  /** The CNs a front proxy's certificate may carry; empty or absent: any (`requestheader-allowed-names`). */
  allowedNames?: readonly string[] | undefined;
  /** Default `["X-Remote-User"]`. */
  usernameHeaders?: readonly string[] | undefined;
  /** Default `["X-Remote-Group"]`. */
  groupHeaders?: readonly string[] | undefined;
  /** Default `["X-Remote-Extra-"]`. */
  extraHeaderPrefixes?: readonly string[] | undefined;
}

/** The CN of the certificate kube-apiserver passes requests on with (kubeadm's `front-proxy-client`). */
export const frontProxyClientName = "front-proxy-client";

/** The ConfigMap kube-apiserver publishes for aggregated servers: `kube-system/extension-apiserver-authentication`. */
export const extensionAuthenticationConfigMap = {
  namespace: "kube-system",
  name: "extension-apiserver-authentication",
};

/**
 * The ConfigMap's data as kube-apiserver's ClusterAuthenticationTrustController
 * writes it: the client CA, and the request-header settings as JSON lists.
 */
export function extensionAuthenticationData(
  clientCA: string | undefined,
  requestHeader: RequestHeaderOptions | undefined,
): Record<string, string> {
  const data: Record<string, string> = {};
  // As the files kube-apiserver reads them from: lines end with "\n".
  const pem = (text: string) => text.replaceAll("\r\n", "\n");
  if (clientCA !== undefined) data["client-ca-file"] = pem(clientCA);
  if (requestHeader !== undefined) {
    const settings = withDefaults(requestHeader);
    data["requestheader-allowed-names"] = JSON.stringify(settings.allowedNames);
    data["requestheader-client-ca-file"] = pem(requestHeader.clientCA);
    data["requestheader-extra-headers-prefix"] = JSON.stringify(settings.extraHeaderPrefixes);
    data["requestheader-group-headers"] = JSON.stringify(settings.groupHeaders);
    data["requestheader-username-headers"] = JSON.stringify(settings.usernameHeaders);
  }
  return data;
}

/**
 * The request-header settings of an `extension-apiserver-authentication`
 * ConfigMap's data, as an aggregated server reads them; undefined when it
 * names no request-header CA.
 */
export function requestHeaderFromData(
  data: Record<string, string> | undefined,
): RequestHeaderOptions | undefined {
  const clientCA = data?.["requestheader-client-ca-file"];
  if (clientCA === undefined || clientCA === "") return undefined;
  const list = (key: string) => {
    const text = data?.[key] ?? "";
    if (text === "") return [];
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === "string"))
      throw new Error(`${key} is not a JSON list of strings`);
    return parsed as string[];
  };
  return {
    clientCA,
    allowedNames: list("requestheader-allowed-names"),
    usernameHeaders: list("requestheader-username-headers"),
    groupHeaders: list("requestheader-group-headers"),
    extraHeaderPrefixes: list("requestheader-extra-headers-prefix"),
  };
}

function withDefaults(options: RequestHeaderOptions) {
  return {
    allowedNames: [...(options.allowedNames ?? [])],
    usernameHeaders: [...(options.usernameHeaders ?? ["X-Remote-User"])],
    groupHeaders: [...(options.groupHeaders ?? ["X-Remote-Group"])],
    extraHeaderPrefixes: [...(options.extraHeaderPrefixes ?? ["X-Remote-Extra-"])],
  };
}

/** What a request's client certificate says to the request-header authenticator. */
export type FrontProxyVerdict =
  /** Not a front proxy's certificate (or none): the other authenticators decide. */
  | undefined
  /** A front proxy's certificate without a user in its headers: not a user by certificate. */
  | "no-user"
  | UserInfo;

export class RequestHeaderAuthenticator {
  readonly #authorities: X509Certificate[];
  readonly #settings: ReturnType<typeof withDefaults>;

  /** Per connection: the CN of its client certificate when the front proxy's CA issued it, else null. */
  readonly #proxies = new WeakMap<object, string | null>();

  constructor(options: RequestHeaderOptions) {
    this.#authorities = pemBlocks(options.clientCA)
      .filter((block) => block.type === "CERTIFICATE")
      .map((block) => new X509Certificate(block.bytes));
    if (this.#authorities.length === 0) throw new Error("requestHeader.clientCA holds no certificate");
    this.#settings = withDefaults(options);
  }

  /**
   * The CN of the connection's verified client certificate when the front
   * proxy's CA issued it, else null: checked once per connection, as its
   * certificate does not change.
   */
  #frontProxyName(socket: Partial<TLSSocket>): string | null {
    let name = this.#proxies.get(socket);
    if (name === undefined) {
      const raw = socket.getPeerCertificate?.()?.raw;
      const leaf = raw === undefined ? undefined : new X509Certificate(raw);
      const issued =
        leaf !== undefined &&
        this.#authorities.some((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
      name = issued ? commonNameOf(parseCertificate(raw!).subject) : null;
      this.#proxies.set(socket, name);
    }
    return name;
  }

  /**
   * The user a front proxy passes on, read from the request's headers when
   * its verified client certificate was issued by the front proxy's CA; a
   * 401 for such a certificate whose CN is not allowed.
   */
  authenticate(request: http.IncomingMessage): FrontProxyVerdict {
    const socket = request.socket as Partial<TLSSocket>;
    if (socket.authorized !== true) return undefined;
    const commonName = this.#frontProxyName(socket);
    if (commonName === null) return undefined;
    const { allowedNames, usernameHeaders, groupHeaders, extraHeaderPrefixes } = this.#settings;
    if (allowedNames.length > 0 && !allowedNames.includes(commonName)) throw newUnauthorized();
    const headers = request.headersDistinct;
    const username = usernameHeaders
      .map((name) => firstValue(headers[name.toLowerCase()]))
      .find((v) => v !== "");
    if (username === undefined) return "no-user";
    const groups = groupHeaders.flatMap((name) =>
      (headers[name.toLowerCase()] ?? []).filter((v) => v !== ""),
    );
    const extra: Record<string, string[]> = {};
    for (const prefix of extraHeaderPrefixes) {
      const lower = prefix.toLowerCase();
      for (const [name, values] of Object.entries(headers)) {
        if (!name.startsWith(lower) || values === undefined) continue;
        const key = unescapeExtraKey(name.slice(lower.length));
        extra[key] = [...(extra[key] ?? []), ...values];
      }
    }
    if (!groups.includes(allAuthenticated)) groups.push(allAuthenticated);
    return { username, groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
  }
}

function firstValue(values: string[] | undefined): string {
  return values?.[0] ?? "";
}

/** upstream's `unescapeExtraKey`: the %-escapes of a lowercased key decoded, or the key as sent. */
function unescapeExtraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}
