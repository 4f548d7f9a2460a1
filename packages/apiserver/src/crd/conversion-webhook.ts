import { errorMessage, type KubeObject, newInternalError } from "@reconcile/api";
import { uuidFrom } from "@reconcile/clock";
import type { AdmissionContext } from "../admission/plugin.js";
import { endpointOf } from "../admission/webhook/endpoint.js";
import type { WebhookTransport } from "../admission/webhook/transport.js";
import type { VersionConversion } from "../registry/resource-definition.js";
import type { CustomResourceDefinition } from "./definition-validation.js";

/** How long a conversion may take: kube-apiserver's fixed 30 s. */
const conversionTimeoutMs = 30_000;

/** What a CRD's conversion webhook needs from the server: how to call out, and how to find a Service. */
export interface ConversionWebhooks {
  readonly transport: WebhookTransport;
  readonly context: AdmissionContext;
}

/**
 * A kind's conversion through its CRD's webhook (`strategy: Webhook`): a
 * ConversionReview v1 with the objects not already at the wanted version,
 * their answers checked as apiextensions-apiserver checks them (as many, at
 * that version, the same uid, name and namespace, metadata changed only in
 * labels and annotations). A failure is a 500 naming the webhook's answer.
 */
export function webhookConversion(
  crd: CustomResourceDefinition,
  servedVersion: string,
  storageVersion: string,
  webhooks: ConversionWebhooks,
): VersionConversion {
  const group = crd.spec.group;
  const kind = crd.spec.names.kind;
  const convert = async (objects: readonly KubeObject[], desired: string): Promise<KubeObject[]> => {
    const apiVersion = `${group}/${desired}`;
    const indexes = objects.flatMap((o, i) => (o.apiVersion === apiVersion ? [] : [i]));
    if (indexes.length === 0) return [...objects];
    const from = objects[indexes[0]!]!.apiVersion ?? "";
    const failed = (why: string) =>
      newInternalError(`conversion webhook for ${from}, Kind=${kind} failed: ${why}`);
    const uid = uuidFrom(webhooks.context.random);
    const review = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      request: { uid, desiredAPIVersion: apiVersion, objects: indexes.map((i) => objects[i]) },
    };
    let answer: Record<string, unknown>;
    try {
      const endpoint = await endpointOf(crd.spec.conversion?.webhook?.clientConfig, webhooks.context);
      answer = await webhooks.transport.call(endpoint, review, conversionTimeoutMs);
    } catch (error) {
      throw failed(errorMessage(error));
    }
    const response = answer.response as
      | { uid?: string; convertedObjects?: KubeObject[]; result?: { status?: string; message?: string } }
      | undefined;
    if (answer.kind !== "ConversionReview" || response === undefined)
      throw failed("the webhook did not answer with a ConversionReview response");
    if (response.uid !== uid) throw failed(`expected response uid ${uid}, got ${response.uid ?? ""}`);
    if (response.result?.status !== "Success")
      throw newInternalError(
        `conversion webhook for ${from}, Kind=${kind} returned failure: ${response.result?.message ?? ""}`,
      );
    const converted = response.convertedObjects ?? [];
    if (converted.length !== indexes.length)
      throw failed(`expected ${indexes.length} converted objects, got ${converted.length}`);
    const out = [...objects];
    indexes.forEach((index, n) => {
      const before = objects[index]!;
      const after = converted[n]!;
      if (after?.apiVersion !== apiVersion)
        throw failed(
          `invalid converted object at index ${n}: invalid apiVersion "${after?.apiVersion ?? ""}", expected "${apiVersion}"`,
        );
      const was = before.metadata ?? {};
      const now = after.metadata ?? {};
      if (now.uid !== was.uid || now.name !== was.name || (now.namespace ?? "") !== (was.namespace ?? ""))
        throw failed(
          `invalid converted object at index ${n}: must not change metadata.uid, name or namespace`,
        );
      // Only labels and annotations may change in metadata; the rest is kept as stored.
      const { labels: _labels, annotations: _annotations, ...kept } = was;
      out[index] = {
        ...after,
        metadata: {
          ...kept,
          ...(now.labels === undefined ? {} : { labels: now.labels }),
          ...(now.annotations === undefined ? {} : { annotations: now.annotations }),
        },
      };
    });
    return out;
  };
  return {
    toStorage: async (object) => (await convert([object], storageVersion))[0]!,
    fromStorage: async (object) => (await convert([object], servedVersion))[0]!,
    fromStorageMany: (objects) => convert(objects, servedVersion),
    answersLater: true,
  };
}
