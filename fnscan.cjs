const ts = require("typescript");
const fs = require("fs");
for (const file of process.argv.slice(2)) {
  const src = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out = [];
  const visit = (node, depth) => {
    const isFn = ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node) || (ts.isVariableStatement(node) && depth===0) || ts.isGetAccessor(node);
    if (isFn) {
      const start = src.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const end = src.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      const name = node.name ? node.name.getText() : (ts.isConstructorDeclaration(node) ? "constructor" : (node.declarationList? node.declarationList.declarations[0].name.getText():"?"));
      out.push(`${"  ".repeat(depth)}${start}-${end} (${end-start+1}) ${ts.SyntaxKind[node.kind]} ${name}`);
    }
    if (ts.isClassDeclaration(node)) node.members.forEach(m => visit(m, depth+1));
  };
  src.statements.forEach(s => visit(s, 0));
  console.log("== " + file); console.log(out.join("\n"));
}
