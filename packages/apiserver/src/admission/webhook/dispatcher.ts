import {
  errorMessage,
  type KubeObject,
  mutatingWebhookConfigurations,
  newBadRequest,
  newInternalError,
  type ResourceDescriptor,
  StatusError,
  validatingWebhookConfigurations,
} from "@reconcile/api";
import { uuidFrom } from "@reconcile/clock";
import type { MutatingWebhook, ValidatingWebhook } from "kubernetes-types/admissionregistration/v1.js";
import { jsonEqual } from "../../json.js";
import type { AdmissionAttributes } from "../../registry/admission.js";
import { jsonPatch } from "../../registry/json-patch.js";
import {
  celRequestValues,
  compileAdmissionExpression,
  type RequestReads,
  requestReads,
  runAdmissionExpression,
} from "../cel.js";
import {
  type AdmissionRule,
  namespaceSelected,
  objectSelected,
  rulesMatch,
  versionedAttributes,
} from "../matching.js";
import { type AdmissionContext, type AdmissionPlugin, knownEmpty, whenKnown } from "../plugin.js";
import { endpointOf } from "./endpoint.js";
import { admissionRequest, admissionReview, denial, readAnswer, replaceContents } from "./review.js";
import { WebhookCallError, type WebhookTransport } from "./transport.js";

type Webhook = MutatingWebhook & ValidatingWebhook;

/** What the webhook plugins report, for the API server's metrics. */
export interface WebhookObserver {
  /** One call: its webhook, the operation, whether it refused, the phase, and how long it took. */
  admission(
    name: string,
    operation: string,
    rejected: boolean,
    type: "admit" | "validating",
    seconds: number,
  ): void;
  /** One refusal or failure (upstream's `apiserver_admission_webhook_rejection_count`). */
  rejection(
    name: string,
    operation: string,
    type: "admit" | "validating",
    errorType: string,
    code: number,
  ): void;
}

export interface WebhookPluginOptions {
  readonly context: AdmissionContext;
  readonly transport: WebhookTransport;
  readonly observer?: WebhookObserver | undefined;
}

/** Each listed set of configurations, its webhooks in upstream's order: kept while the list is. */
const ordered = new WeakMap<readonly KubeObject[], readonly Webhook[]>();
/** The configuration each listed webhook belongs to, by name (for the audit annotations). */
const configurationOf = new WeakMap<Webhook, string>();

/** The webhooks of one kind's configurations, configurations sorted by name as upstream orders them. */
function webhooksOf(
  context: AdmissionContext,
  resource: ResourceDescriptor,
): readonly Webhook[] | Promise<readonly Webhook[]> {
  return whenKnown(context.list(resource, ""), orderedWebhooks);
}

/** The webhooks of `items` (configurations), ordered by their configuration's name; worked out once per list. */
function orderedWebhooks(items: readonly KubeObject[]): readonly Webhook[] {
  let webhooks = ordered.get(items);
  if (webhooks === undefined) {
    webhooks = [...(items as (KubeObject & { webhooks?: Webhook[] })[])]
      .sort((x, y) => ((x.metadata?.name ?? "") < (y.metadata?.name ?? "") ? -1 : 1))
      .flatMap((c) => {
        for (const webhook of c.webhooks ?? []) configurationOf.set(webhook, c.metadata?.name ?? "");
        return c.webhooks ?? [];
      });
    ordered.set(items, webhooks);
  }
  return webhooks;
}

const readsOfWebhooks = new WeakMap<Webhook, RequestReads>();

/** What a webhook's match conditions read of the request (remembered per webhook object). */
function conditionReads(webhook: Webhook): RequestReads {
  let reads = readsOfWebhooks.get(webhook);
  if (reads === undefined) {
    reads = requestReads((webhook.matchConditions ?? []).map((condition) => condition.expression));
    readsOfWebhooks.set(webhook, reads);
  }
  return reads;
}

/**
 * The resource a webhook is to be called as for `a` (upstream's
 * `ShouldCallHook`): the request's own when a rule matches it, else, with
 * `matchPolicy: Equivalent`, the first equivalent resource a rule matches
 * (another version of the kind); false when none, or a selector or match
 * condition says no; the `StatusError` of a match condition that failed closed.
 */
async function webhookMatches(
  webhook: Webhook,
  a: AdmissionAttributes,
  context: AdmissionContext,
): Promise<ResourceDescriptor | false | StatusError> {
  const rules = (webhook.rules ?? []) as AdmissionRule[];
  const invoked = rulesMatch(rules, a, context, webhook.matchPolicy !== "Exact");
  if (invoked === undefined) return false;
  if (!objectSelected(webhook.objectSelector, a)) return false;
  if (!(await namespaceSelected(webhook.namespaceSelector, a, context))) return false;
  const conditions = webhook.matchConditions ?? [];
  if (conditions.length === 0) return invoked;
  // Match conditions see the request as the webhook would: at the version it matched.
  const variables = celRequestValues(await versionedAttributes(a, invoked, context), conditionReads(webhook));
  for (const condition of conditions) {
    const program = compileAdmissionExpression(condition.expression);
    const outcome =
      program instanceof Error ? { error: program.message } : runAdmissionExpression(program, variables);
    if ("error" in outcome) {
      // An error with failurePolicy Ignore skips the webhook; with Fail it refuses the request.
      if (webhook.failurePolicy === "Ignore") return false;
      return newInternalError(
        `failed calling webhook "${webhook.name}": failed to evaluate match condition "${condition.name}": ${outcome.error}`,
      );
    }
    if (outcome.value !== true) return false;
  }
  return invoked;
}

/**
 * Calls one webhook for `a`, passing its warnings on. Resolves `true` when a
 * mutating webhook's patch changed `a.object` (applied in place), `false`
 * when nothing changed or the call failed open. Throws the client's error
 * when the webhook refuses or the call fails closed.
 */
function callWebhook(
  webhook: Webhook,
  a: AdmissionAttributes,
  invoked: ResourceDescriptor,
  options: WebhookPluginOptions,
  mutation?: { round: number; index: number },
): Promise<boolean> {
  if (mutation === undefined) return callOnce(webhook, a, invoked, options, undefined);
  return callRecorded(webhook, a, invoked, options, mutation);
}

async function callRecorded(
  webhook: Webhook,
  a: AdmissionAttributes,
  invoked: ResourceDescriptor,
  options: WebhookPluginOptions,
  mutation: { round: number; index: number },
): Promise<boolean> {
  // Each call of a mutating webhook is recorded in the audit event, whether it changed the object or not.
  let mutated = false;
  try {
    mutated = await callOnce(webhook, a, invoked, options, mutation);
    return mutated;
  } finally {
    a.annotate(
      `mutation.webhook.admission.k8s.io/round_${mutation.round}_index_${mutation.index}`,
      JSON.stringify({ configuration: configurationOf.get(webhook) ?? "", webhook: webhook.name, mutated }),
    );
  }
}

async function callOnce(
  webhook: Webhook,
  a: AdmissionAttributes,
  invoked: ResourceDescriptor,
  options: WebhookPluginOptions,
  mutation: { round: number; index: number } | undefined,
): Promise<boolean> {
  const mutating = mutation !== undefined;
  const { context, transport, observer } = options;
  const name = webhook.name;
  const type = mutating ? "admit" : "validating";
  if (a.dryRun && webhook.sideEffects !== "None" && webhook.sideEffects !== "NoneOnDryRun")
    throw newBadRequest(`admission webhook "${name}" does not support dry run`);
  const started = performance.now();
  const uid = uuidFrom(context.random);
  const fail = (message: string): false => {
    observer?.rejection(name, a.operation, type, "calling_webhook_error", 0);
    if (webhook.failurePolicy === "Ignore") return false;
    throw newInternalError(`failed calling webhook "${name}": ${message}`);
  };
  let answer: ReturnType<typeof readAnswer>;
  let sent = a;
  try {
    if (!(webhook.admissionReviewVersions ?? []).includes("v1"))
      return fail(
        `failed to call webhook: webhook does not accept known AdmissionReview versions: ${(webhook.admissionReviewVersions ?? []).join(", ")}`,
      );
    const endpoint = await endpointOf(webhook.clientConfig, context);
    sent = await versionedAttributes(a, invoked, context);
    const review = admissionReview(admissionRequest(sent, uid, a.resource));
    const answered = await transport.call(endpoint, review, (webhook.timeoutSeconds ?? 10) * 1000);
    answer = readAnswer(answered, uid, mutating);
  } catch (error) {
    if (error instanceof WebhookCallError) return fail(error.message);
    throw error;
  }
  if (typeof answer === "string") return fail(`received invalid webhook response: ${answer}`);
  const seconds = (performance.now() - started) / 1000;
  observer?.admission(name, a.operation, !answer.allowed, type, seconds);
  for (const warning of answer.warnings) a.warn(warning);
  for (const [key, value] of answer.auditAnnotations) a.annotate(`${name}/${key}`, value);
  if (!answer.allowed) {
    const refused = denial(name, answer.status);
    observer?.rejection(name, a.operation, type, "no_error", refused.statusCode);
    throw refused;
  }
  if (answer.patch === undefined || answer.patch.length === 0 || sent.object === undefined) return false;
  let patched: unknown;
  try {
    patched = jsonPatch(sent.object, answer.patch);
  } catch (error) {
    return fail(`received invalid webhook response: the patch could not be applied: ${errorMessage(error)}`);
  }
  if (patched === null || typeof patched !== "object" || Array.isArray(patched))
    return fail(
      "received invalid webhook response: the patch made the object something other than a JSON object",
    );
  if (jsonEqual(patched, sent.object)) return false;
  if (mutation !== undefined)
    a.annotate(
      `patch.webhook.admission.k8s.io/round_${mutation.round}_index_${mutation.index}`,
      JSON.stringify({
        configuration: configurationOf.get(webhook) ?? "",
        webhook: name,
        patch: answer.patch,
        patchType: "JSONPatch",
      }),
      "Request",
    );
  // A patch of an equivalent version's object comes back to the request's version.
  const back =
    sent === a
      ? patched
      : (await versionedAttributes({ ...sent, object: patched as KubeObject }, a.resource, context)).object;
  replaceContents(a.object!, back as KubeObject);
  return true;
}

/**
 * MutatingAdmissionWebhook: the MutatingWebhookConfigurations' webhooks that
 * match, one after another in name order; each sees what the ones before it
 * patched. A webhook with `reinvocationPolicy: IfNeeded` is called once more
 * when a later one changed the object.
 */
export function mutatingWebhookPlugin(options: WebhookPluginOptions): AdmissionPlugin {
  return {
    name: "MutatingAdmissionWebhook",
    admit(a) {
      const webhooks = webhooksOf(options.context, mutatingWebhookConfigurations);
      if (knownEmpty(webhooks)) return false;
      return mutateThrough(a, webhooks, options);
    },
  };
}

/** Calls the mutating webhooks of `webhooks` that match `a`, in order; resolves whether any changed the object. */
async function mutateThrough(
  a: AdmissionAttributes,
  webhooks: readonly Webhook[] | Promise<readonly Webhook[]>,
  options: WebhookPluginOptions,
): Promise<boolean> {
  const matched = new Map<Webhook, { invoked: ResourceDescriptor; index: number }>();
  for (const [index, webhook] of (await webhooks).entries()) {
    const matches = await webhookMatches(webhook, a, options.context);
    if (matches instanceof StatusError) throw matches;
    if (matches) matched.set(webhook, { invoked: matches, index });
  }
  if (matched.size === 0) return false;
  let changed = false;
  const changedAfter = new Map<Webhook, boolean>();
  for (const [webhook, { invoked, index }] of matched) {
    const patched = await callWebhook(webhook, a, invoked, options, { round: 0, index });
    if (patched) {
      changed = true;
      for (const earlier of changedAfter.keys()) changedAfter.set(earlier, true);
    }
    changedAfter.set(webhook, false);
  }
  for (const [webhook, { invoked, index }] of matched) {
    if (webhook.reinvocationPolicy !== "IfNeeded" || changedAfter.get(webhook) !== true) continue;
    if (await callWebhook(webhook, a, invoked, options, { round: 1, index })) changed = true;
  }
  return changed;
}

/** ValidatingAdmissionWebhook: every matching webhook of the ValidatingWebhookConfigurations, at once; the first refusal wins. */
export function validatingWebhookPlugin(options: WebhookPluginOptions): AdmissionPlugin {
  return {
    name: "ValidatingAdmissionWebhook",
    validate(a) {
      const webhooks = webhooksOf(options.context, validatingWebhookConfigurations);
      if (knownEmpty(webhooks)) return;
      return validateThrough(a, webhooks, options);
    },
  };
}

/** Calls every validating webhook of `webhooks` that matches `a`, at once; the first refusal wins. */
async function validateThrough(
  a: AdmissionAttributes,
  webhooks: readonly Webhook[] | Promise<readonly Webhook[]>,
  options: WebhookPluginOptions,
): Promise<void> {
  const matched = new Map<Webhook, ResourceDescriptor>();
  for (const webhook of await webhooks) {
    const matches = await webhookMatches(webhook, a, options.context);
    if (matches instanceof StatusError) throw matches;
    if (matches) matched.set(webhook, matches);
  }
  if (matched.size === 0) return;
  if (matched.size === 1) {
    const [webhook, invoked] = matched.entries().next().value!;
    await callWebhook(webhook, a, invoked, options);
    return;
  }
  const outcomes = await Promise.allSettled(
    [...matched].map(([webhook, invoked]) => callWebhook(webhook, a, invoked, options)),
  );
  for (const outcome of outcomes) if (outcome.status === "rejected") throw outcome.reason;
}
