import type { Environment } from "@marcbachmann/cel-js";
import { Quantity } from "@reconcile/api";

// The `quantity()` library over resource.Quantity.

/** A resource quantity as CEL's `quantity()` returns it. */
export class KubernetesQuantity {
  constructor(readonly quantity: Quantity) {}
}

export function registerQuantities(env: Environment): void {
  env.registerType("kubernetes.Quantity", KubernetesQuantity);
  env.registerFunction("quantity(string): kubernetes.Quantity", (text: string) => {
    try {
      return new KubernetesQuantity(Quantity.parse(text));
    } catch {
      throw new Error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      );
    }
  });
  env.registerFunction("isQuantity(string): bool", (text: string) => {
    try {
      Quantity.parse(text);
      return true;
    } catch {
      return false;
    }
  });
  type Q = KubernetesQuantity;
  env.registerFunction("kubernetes.Quantity.sign(): int", (q: Q) => BigInt(q.quantity.sign()));
  env.registerFunction(
    "kubernetes.Quantity.isGreaterThan(kubernetes.Quantity): bool",
    (a: Q, b: Q) => a.quantity.cmp(b.quantity) > 0,
  );
  env.registerFunction(
    "kubernetes.Quantity.isLessThan(kubernetes.Quantity): bool",
    (a: Q, b: Q) => a.quantity.cmp(b.quantity) < 0,
  );
  env.registerFunction("kubernetes.Quantity.compareTo(kubernetes.Quantity): int", (a: Q, b: Q) =>
    BigInt(a.quantity.cmp(b.quantity)),
  );
  env.registerFunction(
    "kubernetes.Quantity.add(kubernetes.Quantity): kubernetes.Quantity",
    (a: Q, b: Q) => new KubernetesQuantity(a.quantity.add(b.quantity)),
  );
  env.registerFunction(
    "kubernetes.Quantity.add(int): kubernetes.Quantity",
    (a: Q, b: bigint) => new KubernetesQuantity(a.quantity.add(new Quantity(b))),
  );
  env.registerFunction(
    "kubernetes.Quantity.sub(kubernetes.Quantity): kubernetes.Quantity",
    (a: Q, b: Q) => new KubernetesQuantity(a.quantity.sub(b.quantity)),
  );
  env.registerFunction(
    "kubernetes.Quantity.sub(int): kubernetes.Quantity",
    (a: Q, b: bigint) => new KubernetesQuantity(a.quantity.sub(new Quantity(b))),
  );
  env.registerFunction(
    "kubernetes.Quantity.isInteger(): bool",
    (q: Q) => integerOf(q.quantity) !== undefined,
  );
  env.registerFunction("kubernetes.Quantity.asInteger(): int", (q: Q) => {
    const value = integerOf(q.quantity);
    if (value === undefined) throw new Error("cannot convert value to integer");
    return value;
  });
  env.registerFunction("kubernetes.Quantity.asApproximateFloat(): double", (q: Q) =>
    q.quantity.asApproximateFloat64(),
  );
  // Quantities compare by amount, as resource.Quantity.Equal does: quantity("1") == quantity("1000m").
  env.registerOperator("kubernetes.Quantity == kubernetes.Quantity", (a: Q, b: Q) =>
    a.quantity.equal(b.quantity),
  );
}

/** The quantity as an int64 when it is a whole number in range (Quantity.AsInt64). */
function integerOf(quantity: Quantity): bigint | undefined {
  const text = quantity.toString();
  const exact = Quantity.parse(text);
  // A whole number's canonical form may carry a suffix ("1k"); compare with its ceiling.
  const ceiling = BigInt(Math.ceil(quantity.asApproximateFloat64()));
  if (!exact.equal(new Quantity(ceiling))) return undefined;
  if (ceiling > 9223372036854775807n || ceiling < -9223372036854775808n) return undefined;
  return ceiling;
}
