import { GoSyntax } from "./field-errors.js";

// Bad values as apimachinery's field errors print them: what is neither a
// string, a number nor a bool is written with Go's `%#v` (the Go type, then
// its value), so a client sees `map[string]string{"app":"web"}` where the
// JSON would be `{"app":"web"}`. These build that text for the Go types
// validation names; the type names are those of the internal API packages
// upstream validates (`core`, `apps`, `rbac`, …, and `v1` for metav1).

/** A Go value written by `%#v`: a GoSyntax as it is, a string quoted, a number or bool bare. */
type GoValue = GoSyntax | string | number | boolean;

function text(value: GoValue): string {
  if (value instanceof GoSyntax) return value.text;
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** A slice of strings (`[]string{"a", "b"}`, or `[]string(nil)`), of the Go type named. */
export function goStrings(values: readonly string[] | undefined, type = "[]string"): GoSyntax {
  if (values === undefined) return new GoSyntax(`${type}(nil)`);
  return new GoSyntax(`${type}{${values.map((value) => JSON.stringify(value)).join(", ")}}`);
}

/** A map of strings (`map[string]string{"a":"b", "c":"d"}`, keys sorted as fmt sorts them, or nil). */
export function goStringMap(
  map: Readonly<Record<string, string>> | undefined,
  type = "map[string]string",
): GoSyntax {
  if (map === undefined) return new GoSyntax(`${type}(nil)`);
  const entries = Object.keys(map)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(map[key])}`);
  return new GoSyntax(`${type}{${entries.join(", ")}}`);
}

/** A struct: `type{Field:value, …}` with every field in the Go struct's order. */
export function goStruct(type: string, fields: readonly (readonly [string, GoValue])[]): GoSyntax {
  return new GoSyntax(`${type}{${fields.map(([name, value]) => `${name}:${text(value)}`).join(", ")}}`);
}

/** A nil pointer of the Go type named (`(*int64)(nil)`). */
export function goNil(pointerType: string): GoSyntax {
  return new GoSyntax(`(${pointerType})(nil)`);
}

/**
 * A pointer field: nil when absent; a set pointer is written by `%#v` as its
 * address, which no client can rely on, so the value is shown in its place.
 */
export function goPointer(pointerType: string, value: GoValue | undefined): GoSyntax {
  return value === undefined ? goNil(pointerType) : new GoSyntax(`(${pointerType})(${text(value)})`);
}

/** A slice of structs (`[]T{T{…}, …}`, or nil). */
function goSlice<T>(
  type: string,
  values: readonly T[] | undefined,
  element: (value: T) => GoValue,
): GoSyntax {
  if (values === undefined) return new GoSyntax(`${type}(nil)`);
  return new GoSyntax(`${type}{${values.map((value) => text(element(value))).join(", ")}}`);
}

interface Selector {
  matchLabels?: Readonly<Record<string, string>> | undefined;
  matchExpressions?:
    | readonly { key: string; operator: string; values?: readonly string[] | undefined }[]
    | undefined;
}

/** A metav1.LabelSelector, as a workload's selector errors print it. */
export function goLabelSelector(selector: Selector): GoSyntax {
  return goStruct("v1.LabelSelector", [
    ["MatchLabels", goStringMap(selector.matchLabels)],
    [
      "MatchExpressions",
      goSlice("[]v1.LabelSelectorRequirement", selector.matchExpressions, (requirement) =>
        goStruct("v1.LabelSelectorRequirement", [
          ["Key", requirement.key],
          ["Operator", requirement.operator],
          ["Values", goStrings(requirement.values)],
        ]),
      ),
    ],
  ]);
}

interface Toleration {
  key?: string | undefined;
  operator?: string | undefined;
  value?: string | undefined;
  effect?: string | undefined;
  tolerationSeconds?: number | undefined;
}

/** A core.Toleration. */
export function goToleration(toleration: Toleration): GoSyntax {
  return goStruct("core.Toleration", [
    ["Key", toleration.key ?? ""],
    ["Operator", toleration.operator ?? ""],
    ["Value", toleration.value ?? ""],
    ["Effect", toleration.effect ?? ""],
    ["TolerationSeconds", goPointer("*int64", toleration.tolerationSeconds)],
  ]);
}

const goMonths = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/**
 * A `metav1.Time` as `%#v` prints it (its `time.Time`'s GoString): a time
 * read from JSON is in the server's local zone (`time.Local`); an unset one is
 * Go's zero time, in UTC.
 */
export function goTime(iso: string | undefined): GoSyntax {
  const ms = iso === undefined ? Number.NaN : Date.parse(iso);
  if (Number.isNaN(ms)) return new GoSyntax("time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)");
  const t = new Date(ms);
  const fields = [t.getUTCFullYear(), `time.${goMonths[t.getUTCMonth()]}`, t.getUTCDate()];
  fields.push(t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds(), t.getUTCMilliseconds() * 1e6);
  return new GoSyntax(`time.Date(${fields.join(", ")}, time.Local)`);
}
