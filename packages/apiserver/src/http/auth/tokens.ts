import { createHash, generateKeyPairSync, type KeyObject, randomUUID, sign, verify } from "node:crypto";
import { allAuthenticated, serviceAccountGroups, serviceAccountUsername, type UserInfo } from "./user.js";

/** kube-apiserver's default `--service-account-issuer` and API audience. */
export const defaultIssuer = "https://kubernetes.default.svc.cluster.local";

/** What a ServiceAccount token is bound to, besides its ServiceAccount. */
export interface TokenBinding {
  kind: "Pod" | "Secret" | "Node";
  name: string;
  uid: string;
}

export interface TokenRequestInput {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  audiences: readonly string[];
  expirationSeconds: number;
  boundObject?: TokenBinding | undefined;
  /** Where the pod runs, for a pod-bound token. */
  node?: { name: string; uid: string } | undefined;
}

/** The issuer of the tokens kube-controller-manager writes into ServiceAccount token Secrets. */
export const legacyIssuer = "kubernetes/serviceaccount";

/** What a legacy token (in a `kubernetes.io/service-account-token` Secret) names. */
export interface LegacyTokenInput {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  secretName: string;
}

/** The claims of a verified token, as the authenticator needs them. */
export interface TokenClaims {
  /** A legacy token: its Secret must still hold it. */
  legacySecret?: string | undefined;
  namespace: string;
  serviceAccount: { name: string; uid: string };
  pod?: { name: string; uid: string } | undefined;
  secret?: { name: string; uid: string } | undefined;
  node?: { name: string; uid: string } | undefined;
  jti: string | undefined;
  audiences: string[];
  expiresAt: number;
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/**
 * Signs and verifies ServiceAccount tokens (upstream `pkg/serviceaccount`'s
 * JWT issuer): ES256 JWTs with upstream's claims (`iss`, `sub`, `aud`, `exp`,
 * `iat`, `nbf`, `jti`, and `kubernetes.io` naming the namespace, the
 * ServiceAccount and the bound pod, secret or node), from a P-256 key the
 * server makes at start and keeps while it runs. `jwks()` publishes the
 * public key, so a client can verify a token offline.
 */
export class ServiceAccountTokens {
  readonly issuer: string;
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  readonly #keyId: string;

  constructor(issuer: string = defaultIssuer) {
    this.issuer = issuer;
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.#privateKey = privateKey;
    this.#publicKey = publicKey;
    // Upstream's key id: the SHA-256 of the public key's DER, base64url.
    const der = publicKey.export({ format: "der", type: "spki" });
    this.#keyId = createHash("sha256").update(der).digest("base64url");
  }

  /** A signed token for `input`, issued at `now` (ms). */
  issue(input: TokenRequestInput, now: number): { token: string; expiresAt: number } {
    const iat = Math.floor(now / 1000);
    const exp = iat + input.expirationSeconds;
    const kubernetes: Record<string, unknown> = {
      namespace: input.namespace,
      serviceaccount: input.serviceAccount,
    };
    if (input.boundObject?.kind === "Pod") {
      kubernetes.pod = { name: input.boundObject.name, uid: input.boundObject.uid };
      if (input.node !== undefined) kubernetes.node = input.node;
    } else if (input.boundObject?.kind === "Secret")
      kubernetes.secret = { name: input.boundObject.name, uid: input.boundObject.uid };
    else if (input.boundObject?.kind === "Node")
      kubernetes.node = { name: input.boundObject.name, uid: input.boundObject.uid };
    const claims = {
      aud: input.audiences,
      exp,
      iat,
      iss: this.issuer,
      jti: randomUUID(),
      "kubernetes.io": kubernetes,
      nbf: iat,
      sub: serviceAccountUsername(input.namespace, input.serviceAccount.name),
    };
    return { token: this.#sign(claims), expiresAt: exp * 1000 };
  }

  /**
   * A legacy token (upstream's `LegacyClaims`): no expiry and no audience;
   * valid while its Secret holds it and its ServiceAccount exists.
   */
  issueLegacy(input: LegacyTokenInput): string {
    const claims = {
      iss: legacyIssuer,
      "kubernetes.io/serviceaccount/namespace": input.namespace,
      "kubernetes.io/serviceaccount/secret.name": input.secretName,
      "kubernetes.io/serviceaccount/service-account.name": input.serviceAccount.name,
      "kubernetes.io/serviceaccount/service-account.uid": input.serviceAccount.uid,
      sub: serviceAccountUsername(input.namespace, input.serviceAccount.name),
    };
    return this.#sign(claims);
  }

  #sign(claims: Record<string, unknown>): string {
    const signingInput = `${encode({ alg: "ES256", kid: this.#keyId })}.${encode(claims)}`;
    const signature = sign("sha256", Buffer.from(signingInput), {
      key: this.#privateKey,
      dsaEncoding: "ieee-p1363",
    });
    return `${signingInput}.${signature.toString("base64url")}`;
  }

  /**
   * The claims of a token this server signed and that is valid at `now` for
   * one of `audiences`; undefined for a token that is not a JWT of this
   * issuer (another authenticator may know it); an Error naming the problem
   * for one of this issuer that is invalid.
   */
  verify(token: string, now: number, audiences: readonly string[]): TokenClaims | Error | undefined {
    const parts = token.split(".");
    if (parts.length !== 3) return undefined;
    let header: { alg?: string; kid?: string };
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(parts[0]!, "base64url").toString());
      claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString());
    } catch {
      return undefined;
    }
    if (typeof claims !== "object" || claims === null) return undefined;
    const legacy = claims.iss === legacyIssuer;
    if (!legacy && claims.iss !== this.issuer) return undefined;
    if (header.alg !== "ES256")
      return new Error("invalid bearer token, token signed with an unexpected algorithm");
    const valid = verify(
      "sha256",
      Buffer.from(`${parts[0]}.${parts[1]}`),
      { key: this.#publicKey, dsaEncoding: "ieee-p1363" },
      Buffer.from(parts[2]!, "base64url"),
    );
    if (!valid) return new Error("invalid bearer token, square/go-jose: error in cryptographic primitive");
    if (legacy) return legacyClaims(claims);
    const seconds = Math.floor(now / 1000);
    const exp = Number(claims.exp);
    if (!(seconds < exp)) return new Error("invalid bearer token, service account token has expired");
    if (claims.nbf !== undefined && seconds < Number(claims.nbf))
      return new Error("invalid bearer token, service account token is not valid yet");
    const tokenAudiences = Array.isArray(claims.aud) ? claims.aud.map(String) : [String(claims.aud)];
    if (!tokenAudiences.some((a) => audiences.includes(a)))
      return new Error(
        "invalid bearer token, token audiences " +
          JSON.stringify(tokenAudiences) +
          " is invalid for the target audiences " +
          JSON.stringify(audiences),
      );
    const kubernetes = (claims["kubernetes.io"] ?? {}) as Record<
      string,
      { name?: string; uid?: string } | string
    >;
    const namespace = typeof kubernetes.namespace === "string" ? kubernetes.namespace : "";
    const ref = (value: unknown) =>
      typeof value === "object" && value !== null
        ? {
            name: String((value as { name?: unknown }).name ?? ""),
            uid: String((value as { uid?: unknown }).uid ?? ""),
          }
        : undefined;
    const serviceAccount = ref(kubernetes.serviceaccount);
    if (namespace === "" || serviceAccount === undefined)
      return new Error("invalid bearer token, service account token claims are missing");
    return {
      namespace,
      serviceAccount,
      pod: ref(kubernetes.pod),
      secret: ref(kubernetes.secret),
      node: ref(kubernetes.node),
      jti: typeof claims.jti === "string" ? claims.jti : undefined,
      audiences: tokenAudiences,
      expiresAt: exp * 1000,
    };
  }

  /** The user a verified token authenticates as (upstream's `ServiceAccountInfo.UserInfo`). */
  static userOf(claims: TokenClaims): UserInfo {
    const extra: Record<string, string[]> = {};
    if (claims.pod !== undefined) {
      extra["authentication.kubernetes.io/pod-name"] = [claims.pod.name];
      extra["authentication.kubernetes.io/pod-uid"] = [claims.pod.uid];
    }
    if (claims.node !== undefined) {
      extra["authentication.kubernetes.io/node-name"] = [claims.node.name];
      extra["authentication.kubernetes.io/node-uid"] = [claims.node.uid];
    }
    if (claims.jti !== undefined) extra["authentication.kubernetes.io/credential-id"] = [`JTI=${claims.jti}`];
    return {
      username: serviceAccountUsername(claims.namespace, claims.serviceAccount.name),
      uid: claims.serviceAccount.uid,
      groups: [...serviceAccountGroups(claims.namespace), allAuthenticated],
      ...(Object.keys(extra).length === 0 ? {} : { extra }),
    };
  }

  /** The OIDC discovery document (`/.well-known/openid-configuration`). */
  openIdConfiguration(): Record<string, unknown> {
    return {
      issuer: this.issuer,
      jwks_uri: `${this.issuer}/openid/v1/jwks`,
      response_types_supported: ["id_token"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["ES256"],
    };
  }

  /** The public keys (`/openid/v1/jwks`). */
  jwks(): Record<string, unknown> {
    const jwk = this.#publicKey.export({ format: "jwk" });
    return {
      keys: [{ use: "sig", kty: jwk.kty, kid: this.#keyId, crv: jwk.crv, alg: "ES256", x: jwk.x, y: jwk.y }],
    };
  }
}

/** The claims of a legacy token whose signature checked out. */
function legacyClaims(claims: Record<string, unknown>): TokenClaims | Error {
  const text = (key: string) => {
    const value = claims[`kubernetes.io/serviceaccount/${key}`];
    return typeof value === "string" ? value : "";
  };
  const namespace = text("namespace");
  const secret = text("secret.name");
  const name = text("service-account.name");
  if (namespace === "" || secret === "" || name === "")
    return new Error("invalid bearer token, service account token claims are missing");
  return {
    legacySecret: secret,
    namespace,
    serviceAccount: { name, uid: text("service-account.uid") },
    jti: undefined,
    audiences: [],
    expiresAt: Number.POSITIVE_INFINITY,
  };
}
