// cel-go checks the field a `has()` tests as it checks any selection: an
// object type must declare it (`has(self.nope)` is "undefined field
// 'nope'"), and a scalar or list has no fields at all. cel-js checks only the
// root of the argument, so this walks each `has()` of a checked expression
// along its selections, from the root's checked type, with the fields a
// schema declared. cel-go places the tested field at the `(` of `has(`, and a
// selection below it at its own `.`.
import { celGoIssue } from "./cel-issues.js";

/** The fields of an object type a schema declared, by its cel-js name; undefined for any other type. */
export type FieldsOf = (type: string) => Readonly<Record<string, string>> | undefined;

interface Node {
  op?: unknown;
  args?: unknown;
  pos?: number;
  checkedType?: { name?: string };
}

/** cel-go's text of the first `has()` in `ast` that tests a field its operand's type lacks; undefined if none. */
export function presenceIssue(ast: unknown, fieldsOf: FieldsOf, expression: string): string | undefined {
  if (Array.isArray(ast)) {
    for (const item of ast) {
      const issue = presenceIssue(item, fieldsOf, expression);
      if (issue !== undefined) return issue;
    }
    return undefined;
  }
  if (typeof ast !== "object" || ast === null || !("op" in ast)) return undefined;
  const node = ast as Node;
  if (node.op === "call" && Array.isArray(node.args) && node.args[0] === "has") {
    const [argument] = (node.args[1] ?? []) as Node[];
    if (argument?.op === ".") return testedFieldIssue(node, argument, fieldsOf, expression);
  }
  return presenceIssue(node.args, fieldsOf, expression);
}

function testedFieldIssue(
  call: Node,
  argument: Node,
  fieldsOf: FieldsOf,
  expression: string,
): string | undefined {
  const selections: Node[] = [];
  let root: Node = argument;
  while (root.op === "." && Array.isArray(root.args)) {
    selections.unshift(root);
    root = root.args[0] as Node;
  }
  let type = root.checkedType?.name ?? "dyn";
  for (const [i, selection] of selections.entries()) {
    const field = String((selection.args as unknown[])[1]);
    const found = fieldType(type, field, fieldsOf);
    if (typeof found !== "string") {
      const tested = i === selections.length - 1;
      const error = Object.assign(new Error(found.problem), {
        node: tested ? { op: "call", pos: call.pos } : selection,
      });
      return celGoIssue(error, expression);
    }
    type = found;
  }
  return undefined;
}

/** The type of `field` of a value of `type`, or cel-js's words (which celGoIssue turns into cel-go's) for why none. */
function fieldType(type: string, field: string, fieldsOf: FieldsOf): string | { problem: string } {
  const inner = unwrapped(type, "optional<") ?? type;
  if (inner === "dyn") return "dyn";
  const map = unwrapped(inner, "map<");
  if (map !== undefined) return map.slice(topLevelComma(map) + 1).trim();
  const fields = fieldsOf(inner);
  if (fields !== undefined) return fields[field] ?? { problem: `No such key: ${field}` };
  if (fieldless.has(inner) || inner.startsWith("list<")) return { problem: `Cannot index type '${type}'` };
  // A type declared elsewhere: what it holds is not known here, so it is not judged.
  return "dyn";
}

/** Types without fields to select. */
const fieldless = new Set([
  "int",
  "uint",
  "double",
  "bool",
  "string",
  "bytes",
  "null",
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
]);

/** What `prefix…>` holds, or undefined when `type` is not one. */
function unwrapped(type: string, prefix: string): string | undefined {
  return type.startsWith(prefix) && type.endsWith(">") ? type.slice(prefix.length, -1) : undefined;
}

/** Where the key type of `map<K, V>`'s parameters ends. */
function topLevelComma(parameters: string): number {
  let depth = 0;
  for (let i = 0; i < parameters.length; i++) {
    const c = parameters[i];
    if (c === "<") depth++;
    else if (c === ">") depth--;
    else if (c === "," && depth === 0) return i;
  }
  return parameters.length;
}
