/**
 * Lazy tools (docs/lazy-tools.md): a host that asks for them gets the tools of plugins that
 * declare `staticTools` from the boot index, without importing their modules; a module is
 * imported once, at first use, and then behaves as the eager tool. Hostile cases: bytes changed
 * since the record, a definition that moved behind an unchanged file, an import that fails at
 * first use, schemas that must be the host's TypeBox, `validate` of a plugin whose claim is
 * false, and plugins that never declared.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import * as typebox from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { beforeAll, describe, expect, it } from "vitest";
import { refreshBootIndex } from "../../src/boot/index.js";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import type { LoadedCustomTool, ToolLoadError } from "../../src/core/contract.js";
import { validatePath } from "../../src/validate/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

beforeAll(async () => {
  // The records are made in the built validation child (dist/validate/child.js).
  await buildDist();
}, 180_000);

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-lazy-", { trustProject: true });

const opts = () => ({ home: w.home, xcshHome: w.xcshHome, env: {} });
const nm = () => path.join(w.xcshHome, "plugins", "node_modules");
const marker = () => path.join(w.root, "imported.log");
const imports = async () => (await readFile(marker(), "utf8").catch(() => "")).split("\n").filter(Boolean);

/** A tool module that appends its name to the marker when imported; `describe` is the description's JS expression. */
function markedTool(name: string, describe = JSON.stringify(`tool ${name}`), head = ""): string {
  return `import { appendFileSync } from "node:fs";
${head}
appendFileSync(${JSON.stringify(marker())}, ${JSON.stringify(name)} + "\\n");
export default (api) => {
  const { Type } = api.typebox;
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(`Label ${name}`)},
    description: ${describe},
    hidden: false,
    parameters: Type.Object({ q: Type.String({ minLength: 1 }), n: Type.Optional(Type.Number()) }),
    async execute(id, params) { return { content: [{ type: "text", text: ${JSON.stringify(name)} + ":" + params.q + ":" + (this === undefined ? "no-this" : "this") }] }; },
    onSession() {},
    renderCall(args) { return "rendered:" + args.q; },
  };
};
`;
}

/** An installed npm plugin `lazy-p` with `tools`, declaring `staticTools` unless told not to. */
async function install(tools: Record<string, string>, staticTools = true): Promise<void> {
  const plugins = path.join(w.xcshHome, "plugins");
  await w.write(path.join(plugins, "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "lazy-p": "^1.0.0" } });
  await w.write(path.join(plugins, "xcsh-plugins.lock.json"), { plugins: { "lazy-p": { version: "1.0.0", enabledFeatures: null, enabled: true } }, settings: {} });
  await w.write(path.join(nm(), "lazy-p/package.json"), {
    name: "lazy-p",
    version: "1.0.0",
    xcsh: { tools: Object.keys(tools).map((file) => `./tools/${file}`), ...(staticTools ? { staticTools: true } : {}) },
  });
  for (const [file, text] of Object.entries(tools)) await w.write(path.join(nm(), "lazy-p/tools", file), text);
}

/** What an install does after its commit: the index, with records made in the validation child. */
async function record(): Promise<void> {
  await refreshBootIndex({ ...opts(), cwd: w.cwd });
  await rm(marker(), { force: true });
}

async function boot(extra: Record<string, unknown> = {}) {
  const errors: ToolLoadError[] = [];
  const result = await discoverAndLoadCustomTools([], w.cwd, ["read"], undefined, { ...opts(), modules: { "@sinclair/typebox": typebox }, lazyTools: true, onLazyToolError: (e: ToolLoadError) => errors.push(e), ...extra });
  return { ...result, lazyErrors: errors };
}

const named = (tools: LoadedCustomTool[], name: string) => tools.find((t) => t.tool.name === name)!.tool;
const run = (tools: LoadedCustomTool[], name: string, q = "x") => named(tools, name).execute("call-1", { q } as never, undefined, {} as never);

describe("a lazy boot imports nothing, and each module once at first use", () => {
  it("boots without importing, imports once at the first execute, and answers as the eager tool", async () => {
    await install({ "a.mjs": markedTool("lazy_a"), "b.mjs": markedTool("lazy_b") });
    await record();
    const lazy = await boot();
    expect(lazy.errors).toEqual([]);
    expect(lazy.tools.map((t) => [t.tool.name, t.tool.label, t.tool.description, t.source?.plugin])).toEqual([
      ["lazy_a", "Label lazy_a", "tool lazy_a", "lazy-p"],
      ["lazy_b", "Label lazy_b", "tool lazy_b", "lazy-p"],
    ]);
    expect(await imports()).toEqual([]);
    // Rendering before the module is loaded does not throw; session events load it.
    const first = await run(lazy.tools, "lazy_a", "one");
    const second = await run(lazy.tools, "lazy_a", "two");
    expect(await imports()).toEqual(["lazy_a"]);
    await named(lazy.tools, "lazy_b").onSession!({ reason: "start" } as never, {} as never);
    expect(await imports()).toEqual(["lazy_a", "lazy_b"]);

    const eager = await boot({ lazyTools: false });
    expect(eager.tools.map((t) => t.tool.name)).toEqual(["lazy_a", "lazy_b"]);
    const eagerAnswer = await run(eager.tools, "lazy_a", "one");
    expect(first).toEqual(eagerAnswer);
    expect(first).toEqual({ content: [{ type: "text", text: "lazy_a:one:this" }] });
    expect(second).toEqual({ content: [{ type: "text", text: "lazy_a:two:this" }] });
    expect(lazy.lazyErrors).toEqual([]);
  });

  it("a folder entry (its index module) is lazy too, and imports its index at first use", async () => {
    await install({ "dir/index.mjs": markedTool("lazy_dir") });
    await w.write(path.join(nm(), "lazy-p/package.json"), { name: "lazy-p", version: "1.0.0", xcsh: { tools: ["./tools/dir"], staticTools: true } });
    await record();
    const { tools, errors } = await boot();
    expect(errors).toEqual([]);
    expect(tools.map((t) => [t.tool.name, t.resolvedPath])).toEqual([["lazy_dir", path.join(nm(), "lazy-p/tools/dir/index.mjs")]]);
    expect(await imports()).toEqual([]);
    expect(await run(tools, "lazy_dir")).toEqual({ content: [{ type: "text", text: "lazy_dir:x:this" }] });
    expect(await imports()).toEqual(["lazy_dir"]);
  });

  it("gives schemas the host's TypeBox accepts: Kind and Optional symbols, Value.Check", async () => {
    await install({ "a.mjs": markedTool("lazy_a") });
    await record();
    const { tools } = await boot();
    const schema = named(tools, "lazy_a").parameters as unknown as Record<symbol, unknown> & typebox.TObject;
    expect(schema[typebox.Kind]).toBe("Object");
    expect((schema.properties.q as unknown as Record<symbol, unknown>)[typebox.Kind]).toBe("String");
    expect((schema.properties.n as unknown as Record<symbol, unknown>)[typebox.OptionalKind]).toBe("Optional");
    expect(typebox.KindGuard.IsObject(schema)).toBe(true);
    expect(Value.Check(schema, { q: "x" })).toBe(true);
    expect(Value.Check(schema, { q: "x", n: 2 })).toBe(true);
    expect(Value.Check(schema, { q: "" })).toBe(false);
    expect(Value.Check(schema, {})).toBe(false);
    expect(await imports()).toEqual([]);
  });

  it("a host TypeBox without the registered Kind symbol (none, or another) gets every tool eagerly", async () => {
    await install({ "a.mjs": markedTool("lazy_a") });
    await record();
    expect(String(named((await boot()).tools, "lazy_a").execute)).not.toContain("params.q");
    expect(await imports()).toEqual([]);
    const { Kind: _kind, ...withoutKind } = typebox;
    for (const host of [withoutKind, { ...typebox, Kind: Symbol("another TypeBox") }]) {
      const { tools } = await boot({ modules: { "@sinclair/typebox": host } });
      expect(String(named(tools, "lazy_a").execute)).toContain("params.q");
    }
    expect(await imports()).toEqual(["lazy_a"]);
  });

  it("renders before the module is loaded with the host's default, starts the import, and renders as the tool once loaded", async () => {
    await install({ "a.mjs": markedTool("lazy_a") });
    await record();
    const { tools } = await boot();
    const tool = named(tools, "lazy_a");
    expect(tool.renderCall!({ q: "x" } as never, {} as never, {} as never)).toBeUndefined();
    await expect.poll(imports).toEqual(["lazy_a"]);
    await expect.poll(() => tool.renderCall!({ q: "x" } as never, {} as never, {} as never)).toBe("rendered:x");
    await run(tools, "lazy_a");
    expect(await imports()).toEqual(["lazy_a"]);
  });
});

describe("what the record says is never stale", () => {
  it("a lazy record edited by hand into something a lazy tool cannot be is ignored: the entry is imported at boot", async () => {
    await install({ "a.mjs": markedTool("lazy_a") });
    await record();
    const modulesFile = path.join(w.xcshHome, "plugins/.xcsh-tools/boot-modules.json");
    const edits: ((lazy: { methods: string[]; data: Record<string, unknown>; symbols: Record<string, unknown> }) => void)[] = [
      (lazy) => lazy.methods.push("launchMissiles"),
      (lazy) => (lazy.data.onSession = "not a function"),
      (lazy) => (lazy.data.execute = 42),
      (lazy) => (lazy.symbols["/properties/nowhere"] = { "TypeBox.Kind": "String" }),
    ];
    const pristine = await readFile(modulesFile, "utf8");
    // Unedited, the record makes a lazy tool: not the module's own execute.
    expect(String(named((await boot()).tools, "lazy_a").execute)).not.toContain("params.q");
    for (const edit of edits) {
      const index = JSON.parse(pristine);
      for (const records of Object.values(index.modules) as Record<string, { tools: { lazy: Parameters<typeof edit>[0] }[] }>[]) {
        for (const record of Object.values(records)) edit(record.tools[0]!.lazy);
      }
      await writeFile(modulesFile, JSON.stringify(index));
      await rm(marker(), { force: true });
      const { tools, errors } = await boot();
      expect(errors).toEqual([]);
      expect(tools.map((t) => t.tool.name)).toEqual(["lazy_a"]);
      expect(typeof named(tools, "lazy_a").onSession).toBe("function");
      // The tool is the module's own object (this process keeps the module after the first
      // import, so only the first edit can show in the marker).
      expect(String(named(tools, "lazy_a").execute), String(edit)).toContain("params.q");
    }
  });

  it("an entry whose bytes changed since the record is imported at boot and shows its new definition", async () => {
    await install({ "a.mjs": markedTool("lazy_a") });
    await record();
    expect(named((await boot()).tools, "lazy_a").description).toBe("tool lazy_a");
    expect(await imports()).toEqual([]);
    await writeFile(path.join(nm(), "lazy-p/tools/a.mjs"), markedTool("lazy_a", JSON.stringify("the new description")));
    const { tools, errors } = await boot();
    expect(errors).toEqual([]);
    expect(named(tools, "lazy_a").description).toBe("the new description");
    expect(await imports()).toEqual(["lazy_a"]);
  });

  it("a definition that moved behind unchanged bytes is ELAZY_DEFINITION at first use, through the error channel", async () => {
    const side = path.join(w.root, "side.txt");
    await writeFile(side, "first");
    await install({ "a.mjs": markedTool("lazy_a", `readFileSync(${JSON.stringify(side)}, "utf8")`, 'import { readFileSync } from "node:fs";') });
    await record();
    await writeFile(side, "second");
    const { tools, lazyErrors } = await boot();
    expect(named(tools, "lazy_a").description).toBe("first");
    const failed = await run(tools, "lazy_a").then(() => undefined, (error: unknown) => error as { code?: string; message: string });
    expect(failed?.code).toBe("ELAZY_DEFINITION");
    expect(failed?.message).toContain('tool "lazy_a"');
    expect(failed?.message).toContain("(description)");
    expect(lazyErrors.map((e) => [e.code, e.path, e.source?.plugin])).toEqual([["ELAZY_DEFINITION", path.join(nm(), "lazy-p/tools/a.mjs"), "lazy-p"]]);
    // The entry stays failed: a second call says the same, and nothing is imported again.
    const again = await run(tools, "lazy_a").then(() => undefined, (error: unknown) => error as { code?: string });
    expect(again?.code).toBe("ELAZY_DEFINITION");
    expect(await imports()).toEqual(["lazy_a"]);
    // The stale record is gone: the next start runs the factory (this process has the module
    // cached, so no second marker line) and shows what it defines now, not the record's "first".
    const next = await boot();
    expect(named(next.tools, "lazy_a").description).toBe("second");
    expect(next.lazyErrors).toEqual([]);
  });

  it("an import that fails at first use is the loader's EIMPORT, through the error channel", async () => {
    await install({ "a.mjs": markedTool("lazy_a", JSON.stringify("tool lazy_a"), 'import "./dep.mjs";'), "dep.mjs": "export const dep = 1;\n" }, true);
    // dep.mjs is listed as a tool too above; keep only a.mjs as a tool entry.
    await w.write(path.join(nm(), "lazy-p/package.json"), { name: "lazy-p", version: "1.0.0", xcsh: { tools: ["./tools/a.mjs"], staticTools: true } });
    await record();
    await rm(path.join(nm(), "lazy-p/tools/dep.mjs"));
    const { tools, errors, lazyErrors } = await boot();
    expect(errors).toEqual([]);
    const failed = await run(tools, "lazy_a").then(() => undefined, (error: unknown) => error as { code?: string; message: string });
    expect(failed?.code).toBe("EIMPORT");
    expect(failed?.message).toMatch(/^Failed to load tool: /);
    expect(lazyErrors.map((e) => e.code)).toEqual(["EIMPORT"]);
  });
});

describe("a factory that fails at first use says so with the loader's code", () => {
  it("a factory that throws at first use is EFACTORY_THROW, the host's callback and every later call say the same", async () => {
    const side = path.join(w.root, "side.txt");
    await writeFile(side, "ok");
    const head = `import { readFileSync } from "node:fs";\nconst state = () => readFileSync(${JSON.stringify(side)}, "utf8");`;
    await install({ "a.mjs": markedTool("lazy_a", '(state() === "boom" ? (() => { throw new Error("no service") })() : "tool lazy_a")', head) });
    await record();
    await writeFile(side, "boom");
    const { tools, errors, lazyErrors } = await boot();
    expect(errors).toEqual([]);
    for (let i = 0; i < 2; i++) {
      const failed = await run(tools, "lazy_a").then(() => undefined, (error: unknown) => error as { code?: string; message: string });
      expect(failed?.code).toBe("EFACTORY_THROW");
      expect(failed?.message).toContain("no service");
    }
    expect(lazyErrors.map((e) => e.code)).toEqual(["EFACTORY_THROW"]);
  });
});

describe("what a lazy boot skips, it knows", () => {
  /** The same tool listed twice, the second time through a link to the first file. */
  async function installLinked(): Promise<void> {
    const { symlink } = await import("node:fs/promises");
    await install({ "a.mjs": markedTool("lazy_a"), "b.mjs": markedTool("lazy_b") });
    await w.write(path.join(nm(), "lazy-p/package.json"), { name: "lazy-p", version: "1.0.0", xcsh: { tools: ["./tools/a.mjs", "./tools/b.mjs", "./tools/link.mjs"], staticTools: true } });
    await symlink(path.join(nm(), "lazy-p/tools/a.mjs"), path.join(nm(), "lazy-p/tools/link.mjs"));
  }

  it("an entry that is a link to another entry is the same tool, once, as in an eager boot (no second lstat does not mean no link)", async () => {
    await installLinked();
    await record();
    const lazy = await boot();
    const eager = await boot({ lazyTools: false });
    expect(lazy.errors).toEqual([]);
    expect(eager.errors).toEqual([]);
    expect(lazy.tools.map((t) => [t.tool.name, t.path])).toEqual(eager.tools.map((t) => [t.tool.name, t.path]));
    expect(lazy.tools.map((t) => t.tool.name)).toEqual(["lazy_a", "lazy_b"]);
  });

  it("a file swapped for a link to another entry after the record is seen: one tool, no conflict, as in an eager boot", async () => {
    const { symlink } = await import("node:fs/promises");
    await install({ "a.mjs": markedTool("lazy_a"), "b.mjs": markedTool("lazy_b"), "c.mjs": markedTool("lazy_c") });
    await record();
    expect((await boot()).tools.map((t) => t.tool.name)).toEqual(["lazy_a", "lazy_b", "lazy_c"]);
    await rm(path.join(nm(), "lazy-p/tools/c.mjs"));
    await symlink(path.join(nm(), "lazy-p/tools/a.mjs"), path.join(nm(), "lazy-p/tools/c.mjs"));
    for (const booted of [await boot(), await boot()]) {
      expect(booted.errors).toEqual([]);
      expect(booted.tools.map((t) => t.tool.name)).toEqual(["lazy_a", "lazy_b"]);
    }
    expect(await imports()).toEqual([]);
  });

  it("a tool file touched (same bytes, new signature) after the record stays lazy, found by its content", async () => {
    const { utimes } = await import("node:fs/promises");
    await install({ "a.mjs": markedTool("lazy_a") });
    await record();
    const later = new Date(Date.now() + 10_000);
    await utimes(path.join(nm(), "lazy-p/tools/a.mjs"), later, later);
    // The folder too (no hash: the view is rebuilt), so the view's signature of the file is no longer the record's.
    await utimes(path.join(nm(), "lazy-p/tools"), later, later);
    for (const { tools, errors } of [await boot(), await boot()]) {
      expect(errors).toEqual([]);
      expect(named(tools, "lazy_a").description).toBe("tool lazy_a");
      expect(await imports()).toEqual([]);
    }
    expect(await run((await boot()).tools, "lazy_a")).toEqual({ content: [{ type: "text", text: "lazy_a:x:this" }] });
  });
});

describe("only declared plugins are lazy", () => {
  it("a plugin that does not declare staticTools is imported at boot, even when the host asks for lazy tools", async () => {
    await install({ "a.mjs": markedTool("lazy_a") });
    const plugins = path.join(w.xcshHome, "plugins");
    await w.write(path.join(plugins, "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "lazy-p": "^1.0.0", "eager-p": "^1.0.0" } });
    await w.write(path.join(plugins, "xcsh-plugins.lock.json"), { plugins: { "lazy-p": { version: "1.0.0", enabledFeatures: null, enabled: true }, "eager-p": { version: "1.0.0", enabledFeatures: null, enabled: true } }, settings: {} });
    await w.write(path.join(nm(), "eager-p/package.json"), { name: "eager-p", version: "1.0.0", xcsh: { tools: ["./e.mjs"] } });
    await w.write(path.join(nm(), "eager-p/e.mjs"), markedTool("eager_e"));
    await record();
    const { tools } = await boot();
    expect(tools.map((t) => t.tool.name).sort()).toEqual(["eager_e", "lazy_a"]);
    expect(await imports()).toEqual(["eager_e"]);
  });

  it("a host that does not ask gets every module imported at boot (the default is unchanged)", async () => {
    await install({ "a.mjs": markedTool("lazy_a") });
    await record();
    await boot();
    expect(await imports()).toEqual([]);
    const { tools } = await discoverAndLoadCustomTools([], w.cwd, ["read"], undefined, opts());
    expect(tools.map((t) => t.tool.name)).toEqual(["lazy_a"]);
    expect(await imports()).toEqual(["lazy_a"]);
  });

  it("a tool whose definition is not static gets no lazy record and is imported at boot; its static sibling stays lazy", async () => {
    await install({ "a.mjs": markedTool("lazy_a", "`in ${api.cwd}`"), "b.mjs": markedTool("lazy_b") });
    await record();
    const { tools } = await boot();
    expect(named(tools, "lazy_a").description).toBe(`in ${w.cwd}`);
    expect(named(tools, "lazy_b").description).toBe("tool lazy_b");
    expect(await imports()).toEqual(["lazy_a"]);
  });
});

describe("a declared entry is validated once, whatever it holds", () => {
  it("a refresh after the first validates nothing again: static, non-static and broken tools all count as checked", async () => {
    await install({
      "a.mjs": markedTool("lazy_a"),
      "b.mjs": markedTool("lazy_b", "`in ${api.cwd}`"),
      "c.mjs": 'export default () => [{ name: "lazy_c", description: "c", parameters: { type: "object" }, async execute() { return { content: [] }; } }, 42];\n',
      "d.mjs": 'export default () => process.env.LAZY_MANY ? [] : [{ name: "lazy_d", description: "d", parameters: { type: "object" }, async execute() { return { content: [] }; } }];\n',
    });
    const first = await refreshBootIndex({ ...opts(), cwd: w.cwd });
    expect(first.validated).toBe(4);
    await writeFile(path.join(w.cwd, "touch.txt"), "a change nobody reads");
    const second = await refreshBootIndex({ ...opts(), cwd: w.cwd });
    expect(second.validated).toBe(0);
    await rm(marker(), { force: true });
    const { tools } = await boot();
    expect(tools.map((t) => t.tool.name)).toEqual(["lazy_a", "lazy_b", "lazy_c", "lazy_d"]);
    // Only the proved-static entry stays unimported.
    expect(await imports()).toEqual(["lazy_b"]);
  });
});

describe("validate proves a staticTools declaration", () => {
  async function plugin(dir: string, describeExpr: string, staticTools = true) {
    const root = path.join(w.root, dir);
    await w.write(path.join(root, "package.json"), { name: dir, version: "1.0.0", xcsh: { tools: ["./tools/t.mjs"], ...(staticTools ? { staticTools: true } : {}) } });
    await w.write(path.join(root, "tools/t.mjs"), markedTool("probe_tool", describeExpr));
    return root;
  }
  const staticErrors = async (root: string) =>
    (await validatePath(root, { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome })).errors.filter((e) => e.code === "ESTATIC_TOOLS").map((e) => [e.path, e.message]);

  it("names the tool and the field of a definition that follows the cwd", async () => {
    const errors = await staticErrors(await plugin("by-cwd", "`in ${api.cwd}`"));
    expect(errors).toHaveLength(1);
    expect(errors[0]![0]).toBe("/tools/0/description");
    expect(errors[0]![1]).toContain('tool "probe_tool": "description"');
  });

  it("names the tool and the field of a definition that follows the environment (where settings arrive)", async () => {
    const errors = await staticErrors(await plugin("by-env", '`mode ${process.env.LAZY_PROBE_MODE ?? "default"}`'));
    expect(errors.map((e) => e[0])).toEqual(["/tools/0/description"]);
  });

  it("accepts a static definition beside a dependent one, and checks nothing for a plugin that does not declare", async () => {
    const root = await plugin("mixed", JSON.stringify("always the same"));
    await w.write(path.join(root, "tools/u.mjs"), markedTool("probe_user", "`for ${process.env.USER}`"));
    await w.write(path.join(root, "package.json"), { name: "mixed", version: "1.0.0", xcsh: { tools: ["./tools/t.mjs", "./tools/u.mjs"], staticTools: true } });
    const errors = await staticErrors(root);
    expect(errors.map((e) => e[1])).toEqual([expect.stringContaining('tool "probe_user": "description"')]);
    expect(await staticErrors(await plugin("undeclared", "`in ${api.cwd}`", false))).toEqual([]);
  });
});
