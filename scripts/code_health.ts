/**
 * Prints the code-health figures the closing notes of clean-up work compare (docs/code-health-*.md):
 * the largest source files and functions by lines, and the exported names of each area's mod.ts.
 * Usage: `bun scripts/code_health.ts [--most N]`. Reads the files git tracks plus untracked ones it
 * does not ignore; tests count as source too (they are code someone keeps).
 */
import { readFileSync } from "node:fs";
import ts from "typescript";

const most = Number(process.argv[process.argv.indexOf("--most") + 1]) || 15;

function sourceFiles(): string[] {
  const out = Bun.spawnSync(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.ts"]);
  return new TextDecoder()
    .decode(out.stdout)
    .split("\n")
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
}

/** A function-like node's name as a reader would search for it. */
function functionName(node: ts.Node): string | null {
  if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) return node.name?.getText() ?? null;
  if (ts.isFunctionExpression(node) && node.name) return node.name.getText();
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
  }
  return null;
}

type Sized = { where: string; name: string; lines: number };

const files: Sized[] = [];
const functions: Sized[] = [];
for (const path of sourceFiles()) {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    continue; // deleted in the working tree
  }
  files.push({ where: path, name: path, lines: text.split("\n").length });
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const visit = (node: ts.Node) => {
    const name = functionName(node);
    if (name) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      functions.push({ where: `${path}:${start}`, name, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

const modFiles = sourceFiles().filter((f) => /^libs\/(?:domain\/)?[a-z_-]+\/mod\.ts$/.test(f));
const program = ts.createProgram(modFiles, {
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  target: ts.ScriptTarget.ES2022,
  allowImportingTsExtensions: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
});
const checker = program.getTypeChecker();

console.log(`## ${most} largest files (lines)\n`);
for (const f of files.sort((a, b) => b.lines - a.lines).slice(0, most))
  console.log(`- ${f.lines} ${f.where}`);
console.log(`\n## ${most} largest functions (lines)\n`);
for (const f of functions.sort((a, b) => b.lines - a.lines).slice(0, most)) {
  console.log(`- ${f.lines} \`${f.name}\` ${f.where}`);
}
console.log("\n## Exported names per area mod.ts\n");
let total = 0;
for (const path of modFiles.sort()) {
  const sf = program.getSourceFile(path);
  const symbol = sf && checker.getSymbolAtLocation(sf);
  const count = symbol ? checker.getExportsOfModule(symbol).length : 0;
  total += count;
  console.log(`- ${count} ${path}`);
}
console.log(`- ${total} in all`);
