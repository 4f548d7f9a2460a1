import { errorMessage, type KubeObject } from "@reconcile/api";

/** How one version of a kind converts to and from the hub version. */
export interface Spoke<T extends KubeObject = KubeObject, Hub extends KubeObject = KubeObject> {
  toHub(object: T): Hub;
  fromHub(hub: Hub): T;
}

/**
 * A multi-version kind's conversion as controller-runtime's hub and spokes:
 * every version converts to and from the hub version; two spokes convert
 * through it.
 */
export interface Conversion {
  /** The hub version (`v1`); the storage version, usually. */
  readonly hub: string;
  /** Each other served version's conversion, by version name. */
  readonly spokes: Readonly<Record<string, Spoke>>;
}

/** An `apiextensions.k8s.io/v1` ConversionReview. */
export interface ConversionReview {
  apiVersion: string;
  kind: string;
  request?: { uid: string; desiredAPIVersion: string; objects: KubeObject[] };
  response?: {
    uid: string;
    convertedObjects?: KubeObject[];
    result: { status: "Success" | "Failure"; message?: string };
  };
}

const versionOf = (apiVersion: string | undefined) =>
  (apiVersion ?? "").slice((apiVersion ?? "").indexOf("/") + 1);
const groupOf = (apiVersion: string | undefined) => {
  const at = (apiVersion ?? "").indexOf("/");
  return at < 0 ? "" : (apiVersion ?? "").slice(0, at);
};

/**
 * Converts a review's objects with the conversions registered for their kinds
 * (`group/Kind` keys): what `/convert` answers. An object already at the
 * desired version is returned as it is; a failure answers `Failure` with why.
 */
export function convertReview(
  review: ConversionReview,
  conversions: ReadonlyMap<string, Conversion>,
): ConversionReview {
  const request = review.request;
  const respond = (response: Omit<NonNullable<ConversionReview["response"]>, "uid">): ConversionReview => ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    response: { uid: request?.uid ?? "", ...response },
  });
  if (request === undefined)
    return respond({ result: { status: "Failure", message: "the ConversionReview has no request" } });
  const desired = request.desiredAPIVersion;
  try {
    const convertedObjects = request.objects.map((object) => {
      if (object.apiVersion === desired) return object;
      const key = `${groupOf(object.apiVersion)}/${object.kind ?? ""}`;
      const conversion = conversions.get(key);
      if (conversion === undefined) throw new Error(`no conversion is registered for ${key}`);
      const from = versionOf(object.apiVersion);
      const to = versionOf(desired);
      const spoke = (version: string) => {
        const found = conversion.spokes[version];
        if (found === undefined) throw new Error(`${key} has no conversion for version ${version}`);
        return found;
      };
      const hub =
        from === conversion.hub
          ? object
          : { ...spoke(from).toHub(object), apiVersion: `${groupOf(desired)}/${conversion.hub}` };
      const converted = to === conversion.hub ? hub : spoke(to).fromHub(hub);
      return {
        ...converted,
        apiVersion: desired,
        ...(object.kind === undefined ? {} : { kind: object.kind }),
      } as KubeObject;
    });
    return respond({ convertedObjects, result: { status: "Success" } });
  } catch (error) {
    return respond({ result: { status: "Failure", message: errorMessage(error) } });
  }
}
