#!/usr/bin/env node
// The import rules of the tree, checked over the TypeScript sources:
// - no runtime import cycle between files under src/ (an `import type`, or an import whose every
//   name is `type`, is erased at build time and does not count; nor does a dynamic `import()`,
//   which runs after every module has been evaluated);
// - a feature folder of a Durable Object (src/objects/agent/<feature>/, src/objects/tenant/<feature>/)
//   is entered only through its index.ts from anywhere outside it.
// `node scripts/import-graph.mjs` prints what breaks a rule and exits 1; test/unit/import-graph.test.ts runs it.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SRC = join(ROOT, "src");
const FEATURE = /^src\/objects\/(agent|tenant)\/([^/]+)\//;

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

function resolveSpecifier(from, specifier) {
  if (!specifier.startsWith(".")) return null;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** Every relative import of one file: where it leads and whether it is still there at runtime. */
export function importsOf(path) {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, false);
  const found = [];
  const add = (specifier, runtime) => {
    const target = resolveSpecifier(path, specifier);
    if (target) found.push({ target, specifier, runtime });
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly = clause !== undefined && (clause.isTypeOnly || (!clause.name && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly)));
      add(statement.moduleSpecifier.text, !typeOnly);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.exportClause;
      const typeOnly = statement.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((element) => element.isTypeOnly));
      add(statement.moduleSpecifier.text, !typeOnly);
    }
  }
  // Dynamic imports cross folders too (the boundary rule sees them) but never close a cycle at load time.
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) add(node.arguments[0].text, false);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const rel = (path) => relative(ROOT, path).split("\\").join("/");

/** Imports that enter a feature folder from outside it other than through its index.ts. */
export function boundaryViolations(graph) {
  const violations = [];
  for (const [from, edges] of graph) {
    const fromFeature = FEATURE.exec(rel(from))?.[0];
    for (const edge of edges) {
      const to = rel(edge.target);
      const feature = FEATURE.exec(to)?.[0];
      if (!feature || feature === fromFeature || to === `${feature}index.ts`) continue;
      violations.push(`${rel(from)} imports ${to} (use ${feature}index.ts)`);
    }
  }
  return violations;
}

/** Runtime import cycles, each once, as the list of files around it. */
export function runtimeCycles(graph) {
  const cycles = [];
  const seen = new Set();
  const state = new Map(); // 1: on the current path, 2: done
  const stack = [];
  const walk = (file) => {
    state.set(file, 1);
    stack.push(file);
    for (const edge of graph.get(file) ?? []) {
      if (!edge.runtime) continue;
      const mark = state.get(edge.target);
      if (mark === 1) {
        const cycle = stack.slice(stack.indexOf(edge.target)).map(rel);
        const key = [...cycle].sort().join(" ");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(cycle);
        }
      } else if (mark === undefined) walk(edge.target);
    }
    stack.pop();
    state.set(file, 2);
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) walk(file);
  return cycles;
}

export function importGraph() {
  return new Map(sourceFiles(SRC).map((file) => [file, importsOf(file)]));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = importGraph();
  const violations = boundaryViolations(graph);
  const cycles = runtimeCycles(graph);
  for (const line of violations) console.error(`boundary: ${line}`);
  for (const cycle of cycles) console.error(`cycle: ${[...cycle, cycle[0]].join(" -> ")}`);
  if (violations.length > 0 || cycles.length > 0) process.exit(1);
  console.log(`import graph: ${graph.size} files, no runtime cycle, every feature folder entered through its index.ts`);
}
