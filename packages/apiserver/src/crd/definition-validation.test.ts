import { describe, expect, it } from "vitest";
import {
  type CustomResourceDefinition,
  defaultCustomResourceDefinition,
  validateCustomResourceDefinition,
} from "./definition-validation.js";
import { acceptNames } from "./naming.js";

function crontab(
  overrides: Partial<CustomResourceDefinition["spec"]> = {},
  name = "crontabs.stable.example.com",
) {
  const crd: CustomResourceDefinition = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name },
    spec: {
      group: "stable.example.com",
      scope: "Namespaced",
      names: { plural: "crontabs", kind: "CronTab", shortNames: ["ct"] },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object" } } } },
        },
      ],
      ...overrides,
    },
  };
  defaultCustomResourceDefinition(crd);
  return crd;
}

const messages = (crd: CustomResourceDefinition, old?: CustomResourceDefinition) =>
  validateCustomResourceDefinition(crd, old).map((e) => e.message);

const dns1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

describe("CustomResourceDefinition validation", () => {
  it("accepts a well-formed CRD and defaults singular, listKind and conversion", () => {
    const crd = crontab();
    expect(messages(crd)).toEqual([]);
    expect(crd.spec.names).toEqual({
      plural: "crontabs",
      kind: "CronTab",
      shortNames: ["ct"],
      singular: "crontab",
      listKind: "CronTabList",
    });
    expect(crd.spec.conversion).toEqual({ strategy: "None" });
  });

  it("checks the name, group, scope and names with upstream's messages", () => {
    expect(messages(crontab({}, "wrong.example.com"))).toEqual([
      'metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group',
    ]);
    expect(messages(crontab({ group: "nodots" }, "crontabs.nodots"))).toEqual([
      'spec.group: Invalid value: "nodots": should be a domain with at least one dot',
    ]);
    expect(messages(crontab({ scope: "Everywhere" }))).toEqual([
      'spec.scope: Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced"',
    ]);
    expect(
      messages(
        crontab(
          { names: { plural: "CronTabs", kind: "Cron_Tab", listKind: "Cron_Tab" } },
          "CronTabs.stable.example.com",
        ),
      ),
    ).toEqual([
      `spec.names.plural: Invalid value: "CronTabs": ${dns1035}`,
      `spec.names.singular: Invalid value: "cron_tab": ${dns1035}`,
      `spec.names.kind: Invalid value: "Cron_Tab": may have mixed case, but should otherwise match: ${dns1035}`,
      `spec.names.listKind: Invalid value: "Cron_Tab": may have mixed case, but should otherwise match: ${dns1035}`,
      'spec.names.listKind: Invalid value: "Cron_Tab": kind and listKind may not be the same',
    ]);
  });

  it("checks versions: one storage version, unique names, schemas required", () => {
    const base = crontab().spec.versions[0]!;
    expect(messages(crontab({ versions: [base, { ...base, storage: true }] }))).toEqual([
      'spec.versions: Invalid value: ["v1","v1"]: must contain unique version names',
      'spec.versions: Invalid value: ["v1","v1"]: must have exactly one version marked as storage version',
    ]);
    const { schema: _, ...noSchema } = base;
    expect(messages(crontab({ versions: [noSchema] }))).toEqual([
      "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
    ]);
  });

  it("rejects a non-structural schema at the hoisted spec.validation path", () => {
    const base = crontab().spec.versions[0]!;
    const crd = crontab({
      versions: [
        {
          ...base,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: { properties: { a: { type: "string" } } } },
            },
          },
        },
      ],
    });
    expect(messages(crd)).toEqual([
      "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
    ]);
  });

  it("checks webhook conversion's settings, and refuses them under None", () => {
    expect(messages(crontab({ conversion: { strategy: "Webhook" } }))).toEqual([
      "spec.conversion.webhook: Required value: required when strategy is set to Webhook",
    ]);
    expect(
      messages(
        crontab({ conversion: { strategy: "Webhook", webhook: { clientConfig: { url: "http://x" } } } }),
      ),
    ).toEqual([
      "spec.conversion.webhook.conversionReviewVersions: Required value: must specify one of v1, v1beta1",
      "spec.conversion.webhook.clientConfig.url: Invalid value: \"http://x\": 'https' is the only allowed URL scheme",
    ]);
    expect(
      messages(crontab({ conversion: { strategy: "None", webhook: { conversionReviewVersions: ["v1"] } } })),
    ).toEqual(["spec.conversion.webhook: Forbidden: should not be set when strategy is not set to Webhook"]);
    expect(messages(crontab({ conversion: { strategy: "Other" } }))).toEqual([
      'spec.conversion.strategy: Unsupported value: "Other": supported values: "None", "Webhook"',
    ]);
  });

  it("checks printer columns and scale paths", () => {
    const base = crontab().spec.versions[0]!;
    const crd = crontab({
      versions: [
        {
          ...base,
          additionalPrinterColumns: [{ name: "", type: "", format: "x", jsonPath: "spec" }],
          subresources: {
            scale: {
              specReplicasPath: ".x",
              statusReplicasPath: ".status.replicas",
              labelSelectorPath: ".y",
            },
          },
        },
      ],
    });
    expect(messages(crd)).toEqual([
      "spec.additionalPrinterColumns[0].name: Required value",
      "spec.additionalPrinterColumns[0].type: Required value: must be one of boolean,date,integer,number,string",
      'spec.additionalPrinterColumns[0].format: Invalid value: "x": must be one of byte,date,date-time,double,float,int32,int64,password',
      'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec": must be a simple json path starting with .',
      'spec.subresources.scale.specReplicasPath: Invalid value: ".x": should be a json path under .spec',
      'spec.subresources.scale.labelSelectorPath: Invalid value: ".y": should be a json path under either .spec or .status',
    ]);
  });

  it("keeps group and plural immutable, and scope and kind once established", () => {
    const old = crontab();
    old.status = { ...acceptNames(old, [], "2026-01-01T00:00:00Z") };
    const changed = crontab({ scope: "Cluster", names: { plural: "crontabs", kind: "Cron" } });
    expect(messages(changed, old)).toEqual([
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.names.kind: Invalid value: "Cron": field is immutable',
    ]);
  });
});

describe("naming and establishing", () => {
  const now = "2026-01-01T00:00:00Z";
  it("accepts free names and establishes the CRD", () => {
    const status = acceptNames(crontab(), [], now);
    expect(status).toEqual({
      conditions: [
        {
          type: "NamesAccepted",
          status: "True",
          reason: "NoConflicts",
          message: "no conflicts found",
          lastTransitionTime: now,
        },
        {
          type: "Established",
          status: "True",
          reason: "InitialNamesAccepted",
          message: "the initial names have been accepted",
          lastTransitionTime: now,
        },
      ],
      acceptedNames: {
        plural: "crontabs",
        singular: "crontab",
        kind: "CronTab",
        listKind: "CronTabList",
        shortNames: ["ct"],
      },
      storedVersions: ["v1"],
    });
  });

  it("reports conflicts with the accepted names of other CRDs of the group, the last check winning", () => {
    const first = crontab();
    first.status = acceptNames(first, [], now);
    const second = crontab(
      { names: { plural: "crontabs2", singular: "crontab", kind: "CronTab", shortNames: ["ct", "c2"] } },
      "crontabs2.stable.example.com",
    );
    const status = acceptNames(second, [first], now);
    expect(status.conditions).toEqual([
      {
        type: "NamesAccepted",
        status: "False",
        reason: "ListKindConflict",
        message: '"CronTabList" is already in use',
        lastTransitionTime: now,
      },
      {
        type: "Established",
        status: "False",
        reason: "NotAccepted",
        message: "not all names are accepted",
        lastTransitionTime: now,
      },
    ]);
    expect(status.acceptedNames).toEqual({ plural: "crontabs2", kind: "" });
    // Another group may reuse every name.
    const elsewhere = crontab({ group: "other.example.com" }, "crontabs.other.example.com");
    expect(acceptNames(elsewhere, [first], now).conditions?.[0]?.status).toBe("True");
  });
});
