#!/usr/bin/env node
// `node scripts/sizes.mjs`: the size limits of the tree's sources (tests, the published
// conformance suites — tests too — and generated files left out): no file over 600 lines, no
// function over 120. Lists every one over and exits 1 if any is.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import ts from "typescript";

const maxFileLines = 600;
const maxFunctionLines = 120;
const root = new URL("..", import.meta.url).pathname;

const files = execFileSync(
  "git",
  ["ls-files", "packages/*/src/*.ts", "packages/*/src/**/*.ts", "apps/*/src/*.ts"],
  {
    cwd: root,
    encoding: "utf8",
  },
)
  .split("\n")
  .filter(
    (file) =>
      file !== "" && !/\.test(-util)?\.ts$|test-util\.ts$|\.generated\.ts$|conformance\.ts$/.test(file),
  );

const over = [];
for (const file of files) {
  const text = readFileSync(`${root}/${file}`, "utf8");
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > maxFileLines) over.push(`${file}: ${lines} lines (at most ${maxFileLines})`);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const length = end - start + 1;
      if (length > maxFunctionLines) {
        const name =
          node.name?.getText() ?? (ts.isConstructorDeclaration(node) ? "constructor" : "(anonymous)");
        over.push(`${file}:${start + 1}: ${name} is ${length} lines (at most ${maxFunctionLines})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
for (const line of over) console.log(line);
console.log(`${over.length} over the size limits (${files.length} files)`);
process.exit(over.length === 0 ? 0 : 1);
