import {
  ageColumn,
  ageOf,
  column,
  formatLabelSelector,
  type Loose,
  nameColumn,
  nameOf,
  type Printer,
} from "./columns.js";

// kube-apiserver's columns for the admissionregistration.k8s.io kinds (pkg/printers/internalversion).

/** Mutating and validating webhook configurations: how many webhooks each holds. */
export const webhookConfigurationPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "Webhooks",
      "integer",
      "Webhooks indicates the number of webhooks registered in this configuration.",
    ),
    ageColumn,
  ],
  cells: (configuration: Loose, now) => [
    nameOf(configuration),
    Array.isArray(configuration.webhooks) ? configuration.webhooks.length : 0,
    ageOf(configuration, now),
  ],
};

export const validatingAdmissionPolicyPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "Validations",
      "integer",
      "Validations indicates the number of validation rules defined in this configuration",
    ),
    column(
      "ParamKind",
      "string",
      "ParamKind specifies the kind of resources used to parameterize this policy",
    ),
    ageColumn,
  ],
  cells(policy: Loose, now) {
    const kind = policy.spec?.paramKind;
    return [
      nameOf(policy),
      Array.isArray(policy.spec?.validations) ? policy.spec.validations.length : 0,
      kind ? `${kind.apiVersion ?? ""}/${kind.kind ?? ""}` : "<unset>",
      ageOf(policy, now),
    ];
  },
};

export const validatingAdmissionPolicyBindingPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "PolicyName",
      "string",
      "PolicyName indicates the policy definition which the policy binding binded to",
    ),
    column("ParamRef", "string", "ParamRef indicates the param resource which sets the configration param"),
    ageColumn,
  ],
  cells(binding: Loose, now) {
    const ref = binding.spec?.paramRef;
    let param = "<unset>";
    if (ref?.name) param = ref.namespace ? `${ref.namespace}/${ref.name}` : `*/${ref.name}`;
    else if (ref?.selector) param = formatLabelSelector(ref.selector);
    return [nameOf(binding), binding.spec?.policyName ?? "", param, ageOf(binding, now)];
  },
};
