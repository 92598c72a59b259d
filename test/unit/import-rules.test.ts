/**
 * The import rules of src/ (docs/architecture.md), checked over the real import graph at every
 * `npm test` (CI runs it):
 *
 * 1. no cycles: static, dynamic (`import("./x.js")`) and type-only imports all count. A type-only
 *    cycle cannot break module evaluation, but it still means neither module can be read, moved or
 *    tested without the other; a dynamic one is an ordinary cycle evaluated later.
 * 2. layers: base (core, manifest) < engines < doctor < cli; the package entries (index.ts,
 *    testing.ts) sit on top beside cli. A module imports only from its own layer or lower, and the
 *    entries and cli never import each other.
 * 3. engines: they are ordered too (LAYERS.engines, lowest first), and an engine imports only
 *    engines before it, and only through their entry files (ENGINES below); every other file of
 *    an engine is its own business. doctor and cli, which sit above every engine, may use any
 *    engine file (their checks and commands read each engine's state and load per command what
 *    they need).
 * 4. programs (files run as processes of their own) and the package entries are imported by
 *    nothing in src/; the one exception is a program (or entry) handing the package's own API to
 *    the tools it loads (`provideOwnApi(() => import("./index.js"))`), which is what a host does.
 *
 * Why not dependency-cruiser: its majors that run on Node 20.17 (17.x) read TypeScript through the
 * `typescript` package's JS API, which TypeScript 7 (ours) no longer has; the last major (18)
 * needs Node 22 and does not support TypeScript 7 either. The graph here comes from oxc's parser,
 * which rolldown (our bundler) exposes, as in test/unit/exit-codes.test.ts.
 */
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseSync } from "rolldown/experimental";
import { afterAll, describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../../src");

/** The layers, lowest first, by top-level folder (or file) of src/; the engines in their order too. */
const LAYERS: Record<string, readonly string[]> = {
  base: ["core", "manifest"],
  engines: ["host", "discovery", "components", "validate", "boot", "plugins", "marketplace", "teamset", "scaffold"],
  doctor: ["doctor"],
  top: ["cli", "index.ts", "testing.ts"],
};
const LAYER_ORDER = Object.keys(LAYERS);

/**
 * Each engine's entry files: the only files of it that another engine may import. Small modules
 * on purpose where a caller is on a hot path (the host's boot, the installer): importing a barrel
 * instead would load the whole engine there.
 */
const ENGINES: Record<string, readonly string[]> = {
  // The loader and the pieces of it the validation child, the installer and the boot index's simulation use.
  host: ["loader.ts", "module-import.ts", "module-key.ts", "tool-shape.ts", "tool-claims.ts", "timeout.ts", "host-exports.ts", "builtins.ts", "lazy-definition.ts"],
  discovery: ["index.ts", "select.ts", "types.ts", "tools-dir.ts", "providers/index.ts"],
  components: ["scan.ts", "types.ts", "consent.ts", "installed.ts", "root-refs.ts"],
  // The installer validates staged plugins with validate's pieces (run, static and tool checks, the child).
  validate: ["index.ts", "types.ts", "module-check.ts", "run.ts", "static-checks.ts", "tool-checks.ts"],
  // The refresh the installer runs after a commit (plugins/mutation.ts, apply.ts).
  boot: ["index.ts", "prevalidated.ts", "refresh.ts"],
  // The npm plugin engine's transaction, fetcher and tarball limits, which marketplace installs share.
  // team.ts: the pinned installs of a team restore (teamset/restore.ts), in one transaction with its host files.
  // team-preview.ts: what a restore's pinned install would do, before consent (--dry-run, the one question).
  plugins: ["mutation.ts", "npm-client.ts", "tarball-check.ts", "team.ts", "team-preview.ts"],
  // registry.ts: the list of project registries the host files join; tree.ts: the tree hash a seed records. Both on the
  // seed-satisfied restore's path (teamset/fast-seed.ts), which must not load the engine.
  marketplace: ["index.ts", "registry.ts", "tree.ts"],
  // The team-set engine (issue 42); fast.ts: the no-op restore check on the CLI's hot path (no engine loaded);
  // fast-seed.ts: the seed-satisfied restore, answered there too (docs/design/fleets.md).
  teamset: ["index.ts", "fast.ts", "fast-seed.ts"],
  scaffold: ["index.ts"],
};

/**
 * Imports known to break a rule, each with the change that removes it; the check fails when one
 * of them is gone (so the list only shrinks).
 */
const KNOWN: Record<string, string> = {};

/** Files run as processes of their own (bin, forked children): top of the graph wherever they live. */
const PROGRAMS = ["cli/main.ts", "validate/child.ts"];
/** The package's entry points (package.json "exports"). */
const ENTRIES = ["index.ts", "testing.ts"];

export interface Edge {
  from: string;
  to: string;
  kind: "static" | "dynamic" | "type";
  line: number;
}

type AstNode = { type: string; start: number; [key: string]: unknown };
const isNode = (value: unknown): value is AstNode => typeof value === "object" && value !== null && typeof (value as AstNode).type === "string";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []));
}

/** Every relative import of every .ts file under `root`, as paths relative to `root`. */
export function importGraph(root: string): { files: string[]; edges: Edge[]; problems: string[] } {
  const files = sourceFiles(root);
  const known = new Set(files.map((f) => path.relative(root, f)));
  const edges: Edge[] = [];
  const problems: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const parsed = parseSync(file, text);
    const from = path.relative(root, file);
    if (parsed.errors.length > 0) problems.push(`${from}: does not parse`);
    const add = (source: unknown, kind: Edge["kind"], at: number) => {
      if (typeof source !== "string" || !source.startsWith(".")) return;
      const to = path.relative(root, path.resolve(path.dirname(file), source)).replace(/\.js$/, ".ts");
      const line = text.slice(0, at).split("\n").length;
      if (!known.has(to)) problems.push(`${from}:${line}: imports ${source}, which is no .ts file of src/`);
      else edges.push({ from, to, kind, line });
    };
    const visit = (node: AstNode): void => {
      const source = node.source as AstNode | undefined;
      const specifiers = (node.specifiers as AstNode[] | undefined) ?? [];
      // An import() of a computed name loads what is not ours (a tool, the host's package): not an edge.
      if (node.type === "ImportDeclaration") {
        const typeOnly = node.importKind === "type" || (specifiers.length > 0 && specifiers.every((s) => s.importKind === "type"));
        add(source?.value, typeOnly ? "type" : "static", node.start);
      } else if ((node.type === "ExportNamedDeclaration" || node.type === "ExportAllDeclaration") && source) {
        const typeOnly = node.exportKind === "type" || (specifiers.length > 0 && specifiers.every((s) => s.exportKind === "type"));
        add(source.value, typeOnly ? "type" : "static", node.start);
      } else if (node.type === "ImportExpression" && source?.type === "Literal") {
        add(source.value, "dynamic", node.start);
      } else if (node.type === "TSImportType") {
        add(source?.value, "type", node.start);
      }
      for (const child of Object.values(node)) {
        if (Array.isArray(child)) child.filter(isNode).forEach(visit);
        else if (isNode(child)) visit(child);
      }
    };
    visit(parsed.program as unknown as AstNode);
  }
  return { files: [...known].sort(), edges, problems };
}

/** The top-level folder (or file) of a path relative to src/. */
const unitOf = (file: string): string => file.split("/")[0]!;

function layerOf(file: string): number {
  if (PROGRAMS.includes(file)) return LAYER_ORDER.length;
  const unit = unitOf(file);
  const at = LAYER_ORDER.findIndex((name) => LAYERS[name]!.includes(unit));
  if (at < 0) throw new Error(`${file}: its folder ${unit} is in no layer of test/unit/import-rules.test.ts`);
  return at;
}

/** Is `edge` the sanctioned hand-over of the package's own API to the loader (rule 4)? */
function isOwnApiHandOver(edge: Edge, text: (file: string) => string): boolean {
  if (edge.kind !== "dynamic" || edge.to !== "index.ts" || !(ENTRIES.includes(edge.from) || PROGRAMS.includes(edge.from))) return false;
  return /provideOwnApi\(\s*\(\)\s*=>\s*import\(/.test(text(edge.from).split("\n")[edge.line - 1] ?? "");
}

/** The cycles of the graph (strongly connected components of more than one module, or a self-import). */
export function cyclesOf(edges: readonly Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, new Set());
    next.get(e.from)!.add(e.to);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || next.get(v)?.has(v)) cycles.push(component.sort());
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) connect(v);
  return cycles;
}

/** Every broken rule of the src/ tree at `root`, one line each (empty when the tree keeps them). */
export function checkImportRules(root: string): string[] {
  const { edges, problems } = importGraph(root);
  const texts = new Map<string, string>();
  const text = (file: string) => texts.get(file) ?? texts.set(file, readFileSync(path.join(root, file), "utf8")).get(file)!;
  const found = [...problems];
  const at = (e: Edge) => `${e.from}:${e.line}: imports ${e.to}${e.kind === "static" ? "" : ` (${e.kind})`}`;
  const handOvers = edges.filter((e) => isOwnApiHandOver(e, text));
  for (const cycle of cyclesOf(edges.filter((e) => !handOvers.includes(e)))) found.push(`cycle: ${cycle.join(" <-> ")}`);
  for (const e of edges) {
    if (handOvers.includes(e)) continue;
    if (ENTRIES.includes(e.to) || PROGRAMS.includes(e.to)) {
      found.push(`${at(e)}: the package's entry points and programs are imported by nothing in src/`);
      continue;
    }
    const fromLayer = layerOf(e.from);
    const toLayer = layerOf(e.to);
    if (toLayer > fromLayer) {
      found.push(`${at(e)}: upward, from layer ${LAYER_ORDER[fromLayer] ?? "programs"} to layer ${LAYER_ORDER[toLayer]}`);
      continue;
    }
    const fromUnit = unitOf(e.from);
    const toUnit = unitOf(e.to);
    const top = LAYERS.top!;
    if (fromUnit !== toUnit && top.includes(fromUnit) && top.includes(toUnit)) found.push(`${at(e)}: cli and the package entries never import each other`);
    if (fromUnit !== toUnit && LAYERS.engines!.includes(fromUnit) && LAYERS.engines!.includes(toUnit) && !PROGRAMS.includes(e.from)) {
      const engines = LAYERS.engines!;
      if (engines.indexOf(toUnit) > engines.indexOf(fromUnit) && !Object.hasOwn(KNOWN, `${e.from} -> ${e.to}`)) {
        found.push(`${at(e)}: upward among the engines (${engines.join(" < ")})`);
        continue;
      }
      const inside = e.to.slice(toUnit.length + 1);
      if (!(ENGINES[toUnit] ?? []).includes(inside)) found.push(`${at(e)}: into engine ${toUnit}'s internals (its entry files: ${(ENGINES[toUnit] ?? []).join(", ")})`);
    }
  }
  for (const known of Object.keys(KNOWN)) {
    if (root === SRC && !edges.some((e) => `${e.from} -> ${e.to}` === known)) found.push(`${known}: listed in KNOWN but no longer imported; remove it from the list`);
  }
  return found;
}

describe("import rules of src/ (docs/architecture.md)", () => {
  it("reads the whole graph", () => {
    const { files, edges, problems } = importGraph(SRC);
    expect(problems).toEqual([]);
    expect(files.length).toBeGreaterThan(150);
    expect(edges.length).toBeGreaterThan(800);
    // Every engine named in ENGINES is a folder of src/, and every entry file exists.
    for (const [engine, entries] of Object.entries(ENGINES)) for (const entry of entries) expect(files, `${engine}/${entry}`).toContain(`${engine}/${entry}`);
    for (const file of [...PROGRAMS, ...ENTRIES]) expect(files).toContain(file);
    // Every top-level folder is in a layer.
    for (const file of files) expect(() => layerOf(file)).not.toThrow();
  });

  it("src/ keeps every rule", () => {
    expect(checkImportRules(SRC)).toEqual([]);
  });

  describe("fails on a planted violation", () => {
    const roots: string[] = [];
    afterAll(() => {
      for (const root of roots) rmSync(root, { recursive: true, force: true });
    });
    /** A small src/ tree of `files` (with the package entry), checked as src/ is. */
    const planted = (files: Record<string, string>): string => {
      const root = mkdtempSync(path.join(os.tmpdir(), "import-rules-"));
      roots.push(root);
      const all = { "index.ts": `export { loadCustomTools } from "./host/loader.js";\n`, "host/loader.ts": `export const loadCustomTools = 1;\nexport type LoaderErrorCode = string;\n`, ...files };
      for (const [name, text] of Object.entries(all)) {
        mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
        writeFileSync(path.join(root, name), text);
      }
      return root;
    };

    it("a cycle, even of types only", () => {
      const found = checkImportRules(
        planted({ "core/planted-a.ts": `import type { B } from "./planted-b.js";\nexport type A = B;\n`, "core/planted-b.ts": `export type B = string;\nexport type { A } from "./planted-a.js";\n` }),
      );
      expect(found).toEqual(["cycle: core/planted-a.ts <-> core/planted-b.ts"]);
    });

    it("a dynamic import that closes a cycle", () => {
      const found = checkImportRules(planted({ "core/planted-a.ts": `export const a = () => import("./planted-b.js");\n`, "core/planted-b.ts": `import { a } from "./planted-a.js";\nexport const b = a;\n` }));
      expect(found).toEqual(["cycle: core/planted-a.ts <-> core/planted-b.ts"]);
    });

    it("an upward import from the base layer", () => {
      const found = checkImportRules(planted({ "manifest/planted.ts": `export type { LoaderErrorCode } from "../host/loader.js";\n` }));
      expect(found).toEqual([expect.stringMatching(/^manifest\/planted\.ts:1: imports host\/loader\.ts \(type\): upward, from layer base to layer engines$/)]);
    });

    it("an engine importing doctor", () => {
      const found = checkImportRules(planted({ "plugins/planted.ts": `export const x = () => import("../doctor/index.js");\n`, "doctor/index.ts": `export const y = 1;\n` }));
      expect(found).toEqual([expect.stringMatching(/^plugins\/planted\.ts:1: imports doctor\/index\.ts \(dynamic\): upward/)]);
    });

    it("an engine importing a later engine, even its entry file (the loader calling up into boot)", () => {
      const found = checkImportRules(planted({ "host/discover.ts": `import { discoverWithBootIndex } from "../boot/index.js";\nexport const d = discoverWithBootIndex;\n`, "boot/index.ts": `export const discoverWithBootIndex = 1;\n` }));
      expect(found).toEqual([expect.stringMatching(/^host\/discover\.ts:1: imports boot\/index\.ts: upward among the engines \(host < discovery < /)]);
    });

    it("a deep import into another engine's internals", () => {
      const found = checkImportRules(planted({ "marketplace/planted.ts": `export { loadPluginsState } from "../plugins/state.js";\nexport { runMutation } from "../plugins/mutation.js";\n`, "plugins/state.ts": `export const loadPluginsState = 1;\n`, "plugins/mutation.ts": `export const runMutation = 1;\n` }));
      expect(found).toEqual([expect.stringMatching(/^marketplace\/planted\.ts:1: imports plugins\/state\.ts: into engine plugins's internals/)]);
    });

    it("an import of the package's own index from inside src/", () => {
      const found = checkImportRules(planted({ "host/import/module-map.ts": `export const own = () => import("../../index.js");\n`, "host/loader.ts": `export { own as loadCustomTools } from "./import/module-map.js";\n` }));
      // Named as such, besides the cycle it closes.
      expect(found).toEqual(["cycle: host/import/module-map.ts <-> host/loader.ts <-> index.ts", expect.stringMatching(/^host\/import\/module-map\.ts:1: imports index\.ts \(dynamic\): the package's entry points/)]);
    });

    it("the package's own API handed to the loader by the entry is no violation", () => {
      const found = checkImportRules(
        planted({
          "index.ts": `import { provideOwnApi } from "./host/loader.js";\nprovideOwnApi(() => import("./index.js"));\nexport const x = 1;\n`,
          "host/loader.ts": `export function provideOwnApi(load: () => Promise<object>): void { void load; }\n`,
        }),
      );
      expect(found).toEqual([]);
    });

    it("cli importing the package's entry", () => {
      const found = checkImportRules(planted({ "cli/planted.ts": `export { loadCustomTools } from "../index.js";\n` }));
      expect(found).toEqual([expect.stringMatching(/^cli\/planted\.ts:1: imports index\.ts: the package's entry points/)]);
    });

  });
});
