import {
  isDNS1123Label,
  isQualifiedName,
  isValidLabelValue,
  type KubeObject,
  parseQuantity,
  runtimeClasses,
} from "@reconcile/api";
import type { Toleration } from "kubernetes-types/core/v1.js";
import type { RuntimeClass } from "kubernetes-types/node/v1.js";
import type { FieldErrors } from "../registry/field-errors.js";
import { goToleration } from "../registry/go-syntax.js";
import { validateLabels } from "../registry/meta-validation.js";
import type { Strategy } from "../registry/strategy.js";
import { defineKind } from "./definition.js";
import { ageColumn, ageOf, column, nameColumn, nameOf, type Printer } from "./printers/columns.js";

// node.k8s.io/v1 RuntimeClasses: which container runtime handler a pod runs
// with, its fixed overhead and where such pods may schedule. The RuntimeClass
// admission plugin copies the last two into the pods that name one.

const taintEffects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/** upstream's `ValidateTolerations`. */
export function validateTolerations(
  tolerations: readonly Toleration[] | undefined,
  field: string,
  errors: FieldErrors,
): void {
  (tolerations ?? []).forEach((toleration, i) => {
    const at = `${field}[${i}]`;
    const key = toleration.key ?? "";
    const operator = toleration.operator ?? "";
    const value = toleration.value ?? "";
    const effect = toleration.effect ?? "";
    if (key !== "") for (const problem of isQualifiedName(key)) errors.invalid(`${at}.key`, key, problem);
    if (key === "" && operator !== "Exists")
      errors.invalid(
        `${at}.operator`,
        operator,
        'operator must be Exists when `key` is empty, which means "match all values and all keys"',
      );
    if (toleration.tolerationSeconds != null && effect !== "NoExecute")
      errors.invalid(`${at}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set");
    if (operator === "Equal" || operator === "") {
      const problems = isValidLabelValue(value);
      if (problems.length > 0) errors.invalid(`${at}.operator`, value, problems.join(";"));
    } else if (operator === "Exists") {
      if (value !== "")
        errors.invalid(
          `${at}.operator`,
          goToleration(toleration),
          "value must be empty when `operator` is 'Exists'",
        );
    } else errors.notSupported(`${at}.operator`, operator, ["Equal", "Exists"]);
    if (effect !== "" && !taintEffects.includes(effect))
      errors.notSupported(`${at}.effect`, effect, taintEffects);
  });
}

/** The overhead's quantities, checked as `ValidateResourceRequirements` checks limits (hence its `limits` path). */
function validateOverhead(podFixed: Readonly<Record<string, string>> | undefined, errors: FieldErrors): void {
  for (const [name, quantity] of Object.entries(podFixed ?? {})) {
    const field = `overhead.limits[${name}]`;
    for (const problem of isQualifiedName(name)) errors.invalid(field, name, problem);
    let sign: number;
    try {
      sign = parseQuantity(quantity).sign();
    } catch {
      errors.invalid(field, quantity, "must be a valid quantity");
      continue;
    }
    if (sign < 0) errors.invalid(field, quantity, "must be greater than or equal to 0");
  }
}

const runtimeClassStrategy: Strategy = {
  validate(object, errors) {
    const runtimeClass = object as RuntimeClass & KubeObject;
    const handler = runtimeClass.handler ?? "";
    for (const problem of isDNS1123Label(handler)) errors.invalid("handler", handler, problem);
    validateOverhead(runtimeClass.overhead?.podFixed, errors);
    const scheduling = runtimeClass.scheduling;
    if (scheduling !== undefined) {
      validateLabels(scheduling.nodeSelector, "scheduling.nodeSelector", errors);
      validateTolerations(scheduling.tolerations, "scheduling.tolerations", errors);
    }
  },
  validateUpdate(object, old, errors) {
    const handler = (object as RuntimeClass & KubeObject).handler;
    if (handler !== (old as RuntimeClass & KubeObject).handler)
      errors.invalid("handler", handler ?? "", "field is immutable");
  },
};

const runtimeClassPrinter: Printer = {
  columns: [
    nameColumn,
    column(
      "Handler",
      "string",
      "handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class.",
    ),
    ageColumn,
  ],
  cells(object: RuntimeClass & KubeObject, now) {
    return [nameOf(object), object.handler ?? "", ageOf(object, now)];
  },
};

export const runtimeClassDefinition = defineKind({
  descriptor: runtimeClasses,
  strategy: runtimeClassStrategy,
  printer: runtimeClassPrinter,
  allowsCreateOnUpdate: true,
  allowsUnconditionalUpdate: false,
});
