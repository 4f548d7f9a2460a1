// A compile error as cel-go writes it (`issues.String()`), from cel-js's:
//
//   ERROR: <input>:1:5: undefined field 'foo'
//    | self.foo == 1
//    | ....^
//
// The line and column are cel-go's (1-based; a field selection is placed at
// its `.`, an operator at its symbol, a call at its `(`), and the messages
// that users and tests match on are cel-go's words: "undefined field",
// "found no matching overload for '_+_' applied to '(int, string)'",
// "undeclared reference to 'x' (in container '')".

interface ErrorNode {
  op?: unknown;
  pos?: number;
  end?: number;
  args?: unknown;
  left?: ErrorNode;
  right?: ErrorNode;
}

const binaryOperators: Readonly<Record<string, string>> = {
  "==": "_==_",
  "!=": "_!=_",
  "<": "_<_",
  "<=": "_<=_",
  ">": "_>_",
  ">=": "_>=_",
  "+": "_+_",
  "-": "_-_",
  "*": "_*_",
  "/": "_/_",
  "%": "_%_",
  in: "@in",
  "&&": "_&&_",
  "||": "_||_",
};

/** cel-js's message in cel-go's words (its first line; the excerpt is made again). */
export function celGoMessage(message: string): string {
  const line = message.split("\n")[0] ?? message;
  let match = /^No such key: (.*)$/.exec(line);
  if (match) return `undefined field '${match[1]}'`;
  match = /^no such overload: (.+) (==|!=|<=|>=|<|>|\+|-|\*|\/|%|in|&&|\|\|) (.+)$/.exec(line);
  if (match)
    return `found no matching overload for '${binaryOperators[match[2]!]}' applied to '(${goType(match[1]!)}, ${goType(match[3]!)})'`;
  match = /^found no matching overload for '(?:(.+)\.)?([A-Za-z_][\w]*)\((.*)\)'$/.exec(line);
  if (match) {
    const receiver = match[1] === undefined ? "" : goType(match[1]);
    const args = match[3] === "" ? "" : match[3]!.split(", ").map(goType).join(", ");
    return `found no matching overload for '${match[2]}' applied to '${receiver}${receiver ? "." : ""}(${args})'`;
  }
  match = /^Cannot index type '(.*)'$/.exec(line);
  if (match) return `type '${goType(match[1]!)}' does not support field selection`;
  match = /^Unknown variable: (.*)$/.exec(line);
  if (match) return `undeclared reference to '${match[1]}' (in container '')`;
  return line;
}

/** cel-go's spelling of a type: `list(int)`, `map(string, int)`, `optional_type(int)`. */
function goType(type: string): string {
  return type.replaceAll("optional<", "optional_type<").replaceAll("<", "(").replaceAll(">", ")");
}

/** `ERROR: <input>:L:C: message` with cel-go's two-line excerpt of where it is. */
export function celGoIssue(error: Error, expression: string): string {
  const node = (error as { node?: ErrorNode }).node;
  const offset = node === undefined ? 0 : issueOffset(node, expression);
  const before = expression.slice(0, offset);
  const line = before.split("\n").length;
  const lineStart = before.lastIndexOf("\n") + 1;
  const column = offset - lineStart;
  const source = expression.slice(lineStart).split("\n")[0] ?? "";
  return `ERROR: <input>:${line}:${column + 1}: ${celGoMessage(error.message)}\n | ${source}\n | ${".".repeat(column)}^`;
}

/** Where cel-go places an expression: a selection at its `.`, an operator at its symbol, a call at its `(`. */
function issueOffset(node: ErrorNode, expression: string): number {
  const pos = node.pos ?? 0;
  if (node.op === "." || node.op === ".?") {
    const dot = expression.lastIndexOf(".", pos);
    return dot >= 0 ? dot : pos;
  }
  if (typeof node.op === "string" && node.op in binaryOperators && node.left?.end !== undefined) {
    const at = expression.indexOf(node.op, node.left.end);
    return at >= 0 ? at : pos;
  }
  if (node.op === "rcall" || node.op === "call") {
    const receiver = Array.isArray(node.args) ? (node.args[1] as ErrorNode | undefined) : undefined;
    const from = node.op === "rcall" && receiver?.end !== undefined ? receiver.end : pos;
    const open = expression.indexOf("(", from);
    return open >= 0 ? open : pos;
  }
  return pos;
}
