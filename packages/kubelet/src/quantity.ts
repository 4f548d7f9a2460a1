// Just enough of apimachinery's resource.Quantity for admission and node
// capacity: cpu in millicores, everything else in whole units (bytes, pods).

const binary: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const decimal: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The value of a quantity (`"128Mi"`, `"0.5"`, `"100m"`, `"1e3"`), or undefined if it does not parse. */
export function parseQuantity(value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "number") return value;
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/.exec(
    value.trim(),
  );
  if (match === null) return undefined;
  const number = Number(match[1]);
  if (match[2] !== undefined) return number * 10 ** Number(match[2].slice(1));
  const suffix = match[3] ?? "";
  return number * (binary[suffix] ?? decimal[suffix] ?? 1);
}

/** A cpu quantity in millicores, rounded up as `MilliValue` does. */
export function milliCpu(value: string | number | undefined): number {
  const parsed = parseQuantity(value);
  return parsed === undefined ? 0 : Math.ceil(Math.round(parsed * 1e9) / 1e6);
}

/** Any other quantity in whole units, rounded up as `Value` does. */
export function wholeUnits(value: string | number | undefined): number {
  const parsed = parseQuantity(value);
  return parsed === undefined ? 0 : Math.ceil(parsed);
}
