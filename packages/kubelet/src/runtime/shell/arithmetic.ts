import { ShellSyntaxError } from "./parse.js";

// `$(( … ))`: integers, variables (unset is 0), + - * / %, comparisons,
// `&&`/`||`, unary - and !, and parentheses — evaluated by a small parser.

/** Binary operators by precedence, loosest first. */
const levels: readonly (readonly string[])[] = [
  ["||"],
  ["&&"],
  ["==", "!="],
  ["<=", ">=", "<", ">"],
  ["+", "-"],
  ["*", "/", "%"],
];

function apply(op: string, a: number, b: number): number {
  switch (op) {
    case "||":
      return Number(a !== 0 || b !== 0);
    case "&&":
      return Number(a !== 0 && b !== 0);
    case "==":
      return Number(a === b);
    case "!=":
      return Number(a !== b);
    case "<=":
      return Number(a <= b);
    case ">=":
      return Number(a >= b);
    case "<":
      return Number(a < b);
    case ">":
      return Number(a > b);
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    default:
      if (b === 0) throw new ShellSyntaxError("arithmetic syntax error: divide by zero");
      return op === "/" ? Math.trunc(a / b) : a % b;
  }
}

/** The value of an arithmetic expression; a malformed one is a ShellSyntaxError. */
export function evaluateArithmetic(expression: string, vars: ReadonlyMap<string, string>): number {
  const tokens = expression.match(/\s*(\d+|[A-Za-z_][A-Za-z0-9_]*|&&|\|\||==|!=|<=|>=|[-+*/%()<>!])/gy);
  const consumed = (tokens ?? []).join("").length;
  if (tokens === null || expression.slice(consumed).trim() !== "")
    throw new ShellSyntaxError(`arithmetic syntax error`);
  const list = tokens.map((t) => t.trim());
  let at = 0;
  const level = (n: number): number => {
    if (n === levels.length) return unary();
    let value = level(n + 1);
    const ops = levels[n] as readonly string[];
    while (at < list.length && ops.includes(list[at] as string)) {
      const op = list[at++] as string;
      value = apply(op, value, level(n + 1));
    }
    return value;
  };
  const unary = (): number => {
    const token = list[at++];
    if (token === undefined) throw new ShellSyntaxError("arithmetic syntax error");
    if (token === "-") return -unary();
    if (token === "+") return unary();
    if (token === "!") return Number(unary() === 0);
    if (token === "(") {
      const value = level(0);
      if (list[at++] !== ")") throw new ShellSyntaxError("arithmetic syntax error");
      return value;
    }
    if (/^\d+$/.test(token)) return Number(token);
    if (/^[A-Za-z_]/.test(token)) return Math.trunc(Number(vars.get(token) ?? 0)) || 0;
    throw new ShellSyntaxError("arithmetic syntax error");
  };
  const value = level(0);
  if (at !== list.length) throw new ShellSyntaxError("arithmetic syntax error");
  return value;
}
