import * as TypeBox from "@sinclair/typebox";
import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as ownIndex from "../../src/index.js";
import { CustomToolLoader, loadCustomTools } from "../../src/host/loader.js";
import { selectImportStrategy } from "../../src/host/module-import.js";
import type { CustomToolUIContext, HostPendingAction, ToolLoadError } from "../../src/core/contract.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

/** A tool module (.mjs) whose factory returns one tool with `name`. */
const toolModule = (name: string, extra = "") => `
${extra}
export default (api) => ({
  name: ${JSON.stringify(name)},
  label: "Label",
  description: "desc",
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text", text: "ok" }] }),
});
`;

describe("CustomToolLoader", () => {
  let world: TmpWorld;
  let tools: string;
  const source = { provider: "native", providerName: "xcsh", level: "user" as const };
  const opts = () => ({ home: world.home, xcshHome: world.xcshHome, factoryTimeoutMs: 300, importTimeoutMs: 1500 });
  const write = (file: string, content: string) => world.write(path.join(tools, file), content);
  const byCode = (errors: ToolLoadError[], code: string) => errors.filter((e) => e.code === code);

  beforeEach(async () => {
    world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
    tools = path.join(world.root, "tools");
  });
  afterEach(async () => {
    await world.cleanup();
  });

  it("loads tools with path, resolvedPath and source, and defaults a missing label to the name", async () => {
    const file = await write(
      "nolabel.mjs",
      `export default () => ({ name: "no_label", description: "d", parameters: { type: "object" }, execute: async () => ({ content: [] }) });`,
    );
    const result = await loadCustomTools([{ path: file, source }], world.cwd, [], undefined, opts());
    expect(result.errors).toEqual([]);
    expect(result.tools).toHaveLength(1);
    expect(result.tools[0]).toMatchObject({ path: file, resolvedPath: file, source });
    expect(result.tools[0]?.tool.label).toBe("no_label");
  });

  it("resolves relative and ~ paths like the host, and a folder to its index file", async () => {
    await world.write(path.join(world.cwd, "rel.mjs"), toolModule("rel_tool"));
    await world.write(path.join(world.home, "home-tool.mjs"), toolModule("home_tool"));
    await write("folder/index.js", toolModule("folder_tool"));
    const result = await loadCustomTools(
      [{ path: "rel.mjs" }, { path: "~/home-tool.mjs" }, { path: path.join(tools, "folder") }],
      world.cwd,
      [],
      undefined,
      opts(),
    );
    expect(result.errors).toEqual([]);
    expect(result.tools.map((t) => t.tool.name)).toEqual(["rel_tool", "home_tool", "folder_tool"]);
    expect(result.tools[2]?.resolvedPath).toBe(path.join(tools, "folder", "index.js"));
  });

  it("EDECLARATIVE: .md and .json paths are never imported", async () => {
    const md = await write("readme.md", "# not code");
    const json = await write("tool.json", "{}");
    const result = await loadCustomTools([{ path: md, source }, { path: json }], world.cwd, [], undefined, opts());
    expect(result.errors.map((e) => e.code)).toEqual(["EDECLARATIVE", "EDECLARATIVE"]);
    expect(result.errors[0]).toMatchObject({
      path: md,
      source,
      error: "Declarative tool files (.md, .json) cannot be loaded as executable modules",
    });
  });

  it("EIMPORT: a module that throws or a missing file is reported with its message", async () => {
    const broken = await write("broken.mjs", `throw new Error("kaboom at import");`);
    const result = await loadCustomTools(
      [{ path: broken, source }, { path: path.join(tools, "missing.mjs") }],
      world.cwd,
      [],
      undefined,
      opts(),
    );
    expect(result.errors.map((e) => e.code)).toEqual(["EIMPORT", "EIMPORT"]);
    expect(result.errors[0]?.error).toBe("Failed to load tool: kaboom at import");
    expect(result.errors[0]?.source).toEqual(source);
  });

  it("EIMPORT_TIMEOUT: an import that never settles does not hang load()", async () => {
    const hang = await write("hang.mjs", `await new Promise(() => {});\nexport default () => [];`);
    const ok = await write("ok.mjs", toolModule("after_hang"));
    const started = Date.now();
    const result = await loadCustomTools([{ path: hang }, { path: ok }], world.cwd, [], undefined, {
      ...opts(),
      importTimeoutMs: 300,
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.errors.map((e) => e.code)).toEqual(["EIMPORT_TIMEOUT"]);
    expect(result.errors[0]?.error).toMatch(/did not settle within 300 ms/);
    expect(result.tools.map((t) => t.tool.name)).toEqual(["after_hang"]);
  });

  it("ENOT_A_FACTORY: default export (or the module) is not a function", async () => {
    const noDefault = await write("nodefault.mjs", `export const x = 1;`);
    const objDefault = await write("objdefault.mjs", `export default { name: "x" };`);
    const result = await loadCustomTools([{ path: noDefault }, { path: objDefault }], world.cwd, [], undefined, opts());
    expect(result.errors.map((e) => e.code)).toEqual(["ENOT_A_FACTORY", "ENOT_A_FACTORY"]);
    expect(result.errors[0]?.error).toMatch(/^Tool must export a default function/);
  });

  it("EFACTORY_THROW: a factory that throws or rejects", async () => {
    const sync = await write("sync.mjs", `export default () => { throw new Error("sync factory"); };`);
    const asyncF = await write("async.mjs", `export default async () => { throw new Error("async factory"); };`);
    const result = await loadCustomTools([{ path: sync }, { path: asyncF }], world.cwd, [], undefined, opts());
    expect(result.errors.map((e) => [e.code, e.error])).toEqual([
      ["EFACTORY_THROW", "Failed to load tool: sync factory"],
      ["EFACTORY_THROW", "Failed to load tool: async factory"],
    ]);
  });

  it("EFACTORY_TIMEOUT: a factory that never settles", async () => {
    const hang = await write("hangf.mjs", `export default () => new Promise(() => {});`);
    const result = await loadCustomTools([{ path: hang }], world.cwd, [], undefined, opts());
    expect(result.errors.map((e) => e.code)).toEqual(["EFACTORY_TIMEOUT"]);
    expect(result.errors[0]?.error).toMatch(/did not settle within 300 ms/);
  });

  it("EFACTORY_RESULT: null, undefined or a primitive, without crashing load()", async () => {
    const files = await Promise.all([
      write("null.mjs", `export default () => null;`),
      write("undef.mjs", `export default () => undefined;`),
      write("num.mjs", `export default async () => 42;`),
    ]);
    const result = await loadCustomTools(files.map((p) => ({ path: p })), world.cwd, [], undefined, opts());
    expect(result.errors.map((e) => e.code)).toEqual(["EFACTORY_RESULT", "EFACTORY_RESULT", "EFACTORY_RESULT"]);
    expect(result.errors[0]?.error).toMatch(/returned null/);
  });

  it("ETOOL_SHAPE: names the index and field, and the module's other tools still load", async () => {
    const file = await write(
      "mixed.mjs",
      `const ok = (name) => ({ name, description: "d", parameters: { type: "object" }, execute: async () => ({ content: [] }) });
       export default () => [ok("first_ok"), { name: "broken", description: "d", parameters: { type: "object" } }, null, ok("last_ok")];`,
    );
    const result = await loadCustomTools([{ path: file, source }], world.cwd, [], undefined, opts());
    expect(result.tools.map((t) => t.tool.name)).toEqual(["first_ok", "last_ok"]);
    const shape = byCode(result.errors, "ETOOL_SHAPE");
    expect(shape).toHaveLength(2);
    expect(shape[0]?.error).toMatch(/index 1/);
    expect(shape[0]?.error).toMatch(/execute/);
    expect(shape[0]?.toolName).toBe("broken");
    expect(shape[1]?.error).toMatch(/index 2/);
  });

  it("ETOOL_SHAPE: a hostile getter does not escape load()", async () => {
    const file = await write(
      "hostile.mjs",
      `export default () => ({ get name() { throw new Error("evil getter"); }, description: "d", parameters: { type: "object" }, execute() {} });`,
    );
    const result = await loadCustomTools([{ path: file }], world.cwd, [], undefined, opts());
    expect(result.errors.map((e) => e.code)).toEqual(["ETOOL_SHAPE"]);
    expect(result.errors[0]?.error).toMatch(/evil getter/);
  });

  it("ETOOL_NAME: a name that is not an LLM function name", async () => {
    const file = await write("badname.mjs", toolModule("bad name!"));
    const result = await loadCustomTools([{ path: file }], world.cwd, [], undefined, opts());
    expect(result.errors.map((e) => e.code)).toEqual(["ETOOL_NAME"]);
    expect(result.tools).toEqual([]);
  });

  it("ECONFLICT_BUILTIN and ECONFLICT name both sources; first wins", async () => {
    const first = await write("first.mjs", toolModule("shared"));
    const second = await write("second.mjs", toolModule("shared"));
    const builtin = await write("builtin.mjs", toolModule("read"));
    const plugin = { provider: "xcsh-plugins", providerName: "xcsh marketplace", level: "project" as const, plugin: "p@m" };
    const result = await loadCustomTools(
      [{ path: first, source }, { path: second, source: plugin }, { path: builtin }],
      world.cwd,
      ["read", "bash"],
      undefined,
      opts(),
    );
    expect(result.tools.map((t) => t.path)).toEqual([first]);
    const conflict = byCode(result.errors, "ECONFLICT")[0];
    expect(conflict).toMatchObject({ path: second, toolName: "shared", source: plugin, conflictsWith: { path: first, source } });
    expect(conflict?.error).toMatch(/^Tool name "shared" conflicts with existing tool/);
    expect(conflict?.error).toContain(first);
    expect(conflict?.error).toContain("xcsh");
    expect(conflict?.error).toContain(second);
    const builtIn = byCode(result.errors, "ECONFLICT_BUILTIN")[0];
    expect(builtIn).toMatchObject({ path: builtin, toolName: "read", conflictsWith: { builtIn: true } });
    expect(builtIn?.error).toMatch(/built-in/);
  });

  it("keeps input order even when an earlier import is slower", async () => {
    const slow = await write("slow.mjs", toolModule("race", `await new Promise((r) => setTimeout(r, 150));`));
    const fast = await write("fast.mjs", toolModule("race"));
    const result = await loadCustomTools([{ path: slow }, { path: fast }], world.cwd, [], undefined, opts());
    expect(result.tools.map((t) => t.path)).toEqual([slow]);
    expect(result.errors.map((e) => [e.code, e.path])).toEqual([["ECONFLICT", fast]]);
  });

  it("dedupes by real path: a symlink to a loaded tool is skipped silently, factory runs once", async () => {
    const real = await write(
      "counted.mjs",
      toolModule("counted", `globalThis.__xcshCounted = (globalThis.__xcshCounted ?? 0);`).replace(
        "export default (api) => ({",
        "export default (api) => (globalThis.__xcshCounted++, {",
      ),
    );
    const link = path.join(tools, "alias.mjs");
    await symlink(real, link);
    const result = await loadCustomTools([{ path: real }, { path: link }, { path: real }], world.cwd, [], undefined, opts());
    expect(result.errors).toEqual([]);
    expect(result.tools).toHaveLength(1);
    expect((globalThis as { __xcshCounted?: number }).__xcshCounted).toBe(1);
  });

  it("dedupes by real path through a linked folder and a path with '..', and keeps a same-named file of another folder", async () => {
    const realDir = path.join(world.root, "real-plugin");
    const real = await world.write(path.join(realDir, "folded.mjs"), toolModule("folded"));
    const other = await world.write(path.join(world.root, "other-plugin", "folded.mjs"), toolModule("folded_other"));
    await mkdir(tools, { recursive: true });
    const linkedDir = path.join(tools, "linked-plugin");
    await symlink(realDir, linkedDir);
    const viaLink = path.join(linkedDir, "folded.mjs");
    const viaDots = `${realDir}${path.sep}..${path.sep}real-plugin${path.sep}folded.mjs`;
    const result = await loadCustomTools([{ path: viaLink }, { path: real }, { path: viaDots }, { path: other }], world.cwd, [], undefined, opts());
    expect(result.errors).toEqual([]);
    expect(result.tools.map((t) => [t.tool.name, t.path])).toEqual([
      ["folded", viaLink],
      ["folded_other", other],
    ]);
  });

  it("shares one API: setUIContext reaches factories that captured it; pi, cwd, typebox, logger", async () => {
    const file = await write(
      "capture.mjs",
      `export let captured; export default (api) => { captured = api; globalThis.__xcshCaptured = api; return []; };`,
    );
    const other = await write("capture2.mjs", `export default (api) => { globalThis.__xcshCaptured2 = api; return []; };`);
    const pi = { hostThing: 1 };
    const loader = new CustomToolLoader(pi, world.cwd, [], undefined, opts());
    await loader.load([{ path: file }, { path: other }]);
    const api = (globalThis as { __xcshCaptured?: Record<string, unknown> }).__xcshCaptured as unknown as ownIndex.CustomToolAPI;
    expect(api).toBe((globalThis as { __xcshCaptured2?: unknown }).__xcshCaptured2);
    expect(api.cwd).toBe(world.cwd);
    expect(api.pi).toBe(pi);
    expect(api.typebox).toBe(TypeBox);
    expect(api.hasUI).toBe(false);
    expect(await api.ui.confirm("t", "m")).toBe(false);
    expect(() => api.logger.info("silent")).not.toThrow();
    const ui = { notify() {} } as unknown as CustomToolUIContext;
    loader.setUIContext(ui, true);
    expect(api.ui).toBe(ui);
    expect(api.hasUI).toBe(true);
  });

  it("loadCustomTools' setUIContext mutates the shared API too; exec defaults to the loader cwd", async () => {
    const file = await write("capture3.mjs", `export default (api) => { globalThis.__xcshCaptured3 = api; return []; };`);
    const result = await loadCustomTools([{ path: file }], world.cwd, [], undefined, opts());
    const api = (globalThis as { __xcshCaptured3?: ownIndex.CustomToolAPI }).__xcshCaptured3 as ownIndex.CustomToolAPI;
    const ui = { notify() {} } as unknown as CustomToolUIContext;
    result.setUIContext(ui, true);
    expect(api.ui).toBe(ui);
    expect(api.hasUI).toBe(true);
    const pwd = await api.exec(process.execPath, ["-e", "process.stdout.write(process.cwd())"]);
    expect(pwd.stdout).toBe(world.cwd);
  });

  it("pushPendingAction forwards with a default sourceToolName, and throws without a host callback", async () => {
    const file = await write("pending.mjs", `export default (api) => { globalThis.__xcshPending = api; return []; };`);
    const pushed: HostPendingAction[] = [];
    await loadCustomTools([{ path: file }], world.cwd, [], (a) => pushed.push(a), opts());
    const api = (globalThis as { __xcshPending?: ownIndex.CustomToolAPI }).__xcshPending as ownIndex.CustomToolAPI;
    const apply = async () => ({ content: [] });
    api.pushPendingAction({ label: "Do it", apply, details: { secret: 1 } });
    expect(pushed).toEqual([{ label: "Do it", sourceToolName: "custom_tool", apply, reject: undefined }]);

    const bare = new CustomToolLoader(undefined, world.cwd, [], undefined, opts());
    expect(() => bare.api.pushPendingAction({ label: "x", apply })).toThrow(
      "Pending action store unavailable for custom tools in this runtime.",
    );
  });

  it("never throws out of load() for garbage input", async () => {
    const loader = new CustomToolLoader(undefined, world.cwd, [], undefined, opts());
    await expect(loader.load([null as never, { path: 42 as never }])).resolves.toBeUndefined();
    expect(loader.errors.length).toBe(2);
  });

  const tsTool = `
import { Type } from "@sinclair/typebox";
import * as xcsh from "xcsh-tools";
import { helper } from "./helper.js";
const n: number = helper(1);
export default () => ({ name: "ts_tool", description: "d", parameters: Type.Object({}), execute: async () => ({ content: [] }),
  meta: { Type, CustomToolAdapter: xcsh.CustomToolAdapter, n } });
`;

  it.skipIf(selectImportStrategy("/x/a.ts") !== "jiti")(
    "module map: a .ts tool in a folder without node_modules gets our very instances (jiti)",
    async () => {
      const file = await write("ts/tool.ts", tsTool);
      await write("ts/helper.ts", `export function helper(x: number): number { return x + 1; }`);
      const result = await loadCustomTools([{ path: file }], world.cwd, [], undefined, opts());
      expect(result.errors).toEqual([]);
      const meta = (result.tools[0]?.tool as unknown as { meta: Record<string, unknown> }).meta;
      expect(meta.Type).toBe(TypeBox.Type);
      expect(meta.CustomToolAdapter).toBe(ownIndex.CustomToolAdapter);
      expect(meta.n).toBe(2);
    },
  );
});
