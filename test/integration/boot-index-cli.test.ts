/**
 * The boot index through the built CLI: `link`/`unlink` (mutations) refresh it and compile the
 * plugin's TypeScript ahead; `tools` answers from a fresh index without importing plugin code in
 * any process, rebuilds it when a tool was edited behind its back, and never loads the heavy
 * dependencies (jiti, arborist, pacote, listr2) in its own process.
 */
import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { BOOT_INDEX_VERSION, checkBootIndex } from "../../src/boot/index.js";
import { xcshPaths } from "../../src/core/paths.js";
import { buildDist, modulesOfLoadedFiles } from "../helpers/build-dist.js";
import { catalog, catalogPath, pluginFiles } from "../helpers/marketplace-fixtures.js";
import { cliArgv, hermeticEnv, runCli, runProcess } from "../helpers/run-cli.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

beforeAll(async () => {
  await buildDist();
}, 180_000);

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-boot-cli-", { trustProject: true });

const marker = () => path.join(w.root, "imported.log");
const markerLines = async () => (await readFile(marker(), "utf8").catch(() => "")).split("\n").filter(Boolean);
const cli = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home, timeoutMs: 60_000 });

function tsTool(name: string, description: string): string {
  return `import { appendFileSync } from "node:fs";
appendFileSync(${JSON.stringify(marker())}, process.pid + " ${name}\\n");
const parameters: { type: "object"; properties: { who: { type: "string" } } } = { type: "object", properties: { who: { type: "string" } } };
export default () => ({
  name: ${JSON.stringify(name)},
  label: "Hello",
  description: ${JSON.stringify(description)},
  parameters,
  async execute() { return { content: [{ type: "text" as const, text: "hi" }] }; },
});
`;
}

async function writePlugin(): Promise<string> {
  const dir = path.join(w.root, "src/hello-plugin");
  await w.write(path.join(dir, "package.json"), { name: "hello-plugin", version: "1.0.0", type: "module", xcsh: { tools: ["./tools/hello.ts"] } });
  await w.write(path.join(dir, "tools/hello.ts"), tsTool("hello_tool", "says hello"));
  return dir;
}

/** Run the CLI with a resolve hook that logs every module URL the CLI process loads. */
async function toolsWithImportLog(): Promise<{ json: any; urls: string[]; files: string[] }> {
  const log = path.join(w.root, "resolved.log");
  await writeFile(log, "");
  const hooks = await w.write(
    "hooks/log-hooks.mjs",
    `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, result.url + "\\n");
  return result;
}
`,
  );
  const register = await w.write("hooks/register.mjs", `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
  const r = await runProcess(process.execPath, ["--import", register, ...cliArgv(w.home, ["tools", "--json"])], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  // The modules those files hold: the CLI's files are the bundle's chunks.
  const loaded = (await readFile(log, "utf8")).split("\n").filter(Boolean);
  return { json: r.json(), urls: modulesOfLoadedFiles(loaded), files: [...new Set(loaded.filter((url) => url.startsWith("file:")))] };
}

const HEAVY = /node_modules\/(jiti|@npmcli\/arborist|pacote|listr2)\//;

describe("boot index through the CLI", () => {
  it("link refreshes it and compiles ahead; tools answers from it without importing plugin code or heavy dependencies", { timeout: 120_000 }, async () => {
    const dir = await writePlugin();
    const linked = await cli(["link", dir]);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stderr).not.toMatch(/boot index could not be refreshed/);

    const paths = xcshPaths({ home: w.home, xcshHome: w.xcshHome });
    const index = JSON.parse(await readFile(paths.bootIndex, "utf8"));
    expect(index.version).toBe(BOOT_INDEX_VERSION);
    expect(index.modules).toBeUndefined();
    const records = Object.values(JSON.parse(await readFile(paths.bootModules, "utf8")).modules as Record<string, Record<string, { tools: { name: string; description: string }[] }>>).flatMap((byRuntime) => Object.values(byRuntime));
    expect(records.flatMap((r) => r.tools.map((t) => `${t.name}: ${t.description}`))).toEqual(["hello_tool: says hello"]);
    // TypeScript compiled ahead into the transpile cache the host uses.
    expect((await readdir(paths.transpileCache)).some((name) => name.includes("hello"))).toBe(true);

    const importedAtLink = (await markerLines()).length;
    expect(importedAtLink).toBeGreaterThan(0);
    const { json, urls, files } = await toolsWithImportLog();
    expect(json.index).toEqual({ fresh: true, reason: "fresh" });
    // The modules of the query's path are bundled into a few chunks (scripts/lib/bundle.mjs HOT_CHUNKS), not one file each.
    expect(files.filter((url) => url.includes("/dist/")).length).toBeLessThanOrEqual(10);
    expect(json.tools).toEqual([
      {
        name: "hello_tool",
        description: "says hello",
        file: path.join(paths.pluginsNodeModules, "hello-plugin/tools/hello.ts"),
        provider: "npm",
        source: "npm Plugin",
        level: "user",
        plugin: "hello-plugin",
      },
    ]);
    expect(json.errors).toEqual([]);
    // Nothing imported the plugin, in any process.
    expect((await markerLines()).length).toBe(importedAtLink);
    expect(urls.some((url) => url.includes("/src/boot/"))).toBe(true);
    expect(urls.filter((url) => HEAVY.test(url))).toEqual([]);
    // A fresh answer needs no schema library either: the index is checked by hand, settings
    // layers are empty, and discovery (with its validators) is not loaded.
    expect(urls.filter((url) => url.includes("/@sinclair/typebox/") || url.includes("/src/discovery/providers/"))).toEqual([]);
    // The CLI loads the `tools` command alone, and no settings file in reach means no cosmiconfig.
    expect(urls.filter((url) => url.includes("/cosmiconfig/") || (url.includes("/src/cli/commands/") && !/\/commands\/(index|tools)\.ts$/.test(url)))).toEqual([]);
    // A plain `tools` argv runs without commander, and our settings' reader stays unloaded.
    expect(urls.filter((url) => url.includes("/node_modules/commander/") || url.endsWith("/src/core/config.ts"))).toEqual([]);
  });

  it("install validates once: the refresh reuses the staging outcome of JavaScript entries and imports only TypeScript again, to compile it at its live path", { timeout: 120_000 }, async () => {
    const dir = path.join(w.root, "src/mixed-plugin");
    await w.write(path.join(dir, "package.json"), { name: "mixed-plugin", version: "1.0.0", type: "module", xcsh: { tools: ["./tools/js_tool.js", "./tools/ts_tool.ts"] } });
    await w.write(path.join(dir, "tools/js_tool.js"), tsTool("js_tool", "plain JavaScript").replace(": { type: \"object\"; properties: { who: { type: \"string\" } } }", "").replace(" as const", ""));
    await w.write(path.join(dir, "tools/ts_tool.ts"), tsTool("ts_tool", "TypeScript"));
    const installed = await cli(["install", dir]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stderr).not.toMatch(/boot index could not be refreshed/);
    const imports = (await markerLines()).map((line) => line.split(" ")[1]);
    expect(imports.filter((name) => name === "js_tool")).toHaveLength(1);
    expect(imports.filter((name) => name === "ts_tool")).toHaveLength(2);

    const paths = xcshPaths({ home: w.home, xcshHome: w.xcshHome });
    const { json } = await toolsWithImportLog();
    expect(json.index).toEqual({ fresh: true, reason: "fresh" });
    expect(json.tools.map((t: { name: string; description: string; file: string }) => [t.name, t.description, t.file])).toEqual([
      ["js_tool", "plain JavaScript", path.join(paths.pluginsNodeModules, "mixed-plugin/tools/js_tool.js")],
      ["ts_tool", "TypeScript", path.join(paths.pluginsNodeModules, "mixed-plugin/tools/ts_tool.ts")],
    ]);
    expect((await markerLines()).length).toBe(imports.length);
    // The reused record is the one a scan-and-validate would have written.
    const records = JSON.parse(await readFile(paths.bootModules, "utf8")).modules as Record<string, unknown>;
    await writeFile(paths.bootIndex, "{}");
    await writeFile(paths.bootModules, "{}");
    expect((await cli(["tools", "--json"])).json().tools.map((t: { name: string }) => t.name)).toEqual(["js_tool", "ts_tool"]);
    const rebuilt = JSON.parse(await readFile(paths.bootModules, "utf8")).modules as Record<string, Record<string, { tools: unknown; failure?: unknown }>>;
    const toolsOf = (modules: Record<string, any>) => Object.fromEntries(Object.entries(modules).map(([file, byRuntime]) => [file, Object.fromEntries(Object.entries(byRuntime as Record<string, any>).map(([runtime, r]) => [runtime, { tools: r.tools, failure: r.failure }]))]));
    expect(toolsOf(rebuilt)).toEqual(toolsOf(records));
  });

  it("tools notices a tool edited behind its back, revalidates it in a child, and the next run is fresh", { timeout: 120_000 }, async () => {
    const dir = await writePlugin();
    expect((await cli(["link", dir])).code).toBe(0);
    await w.write(path.join(dir, "tools/hello.ts"), tsTool("hello_tool", "says hello, edited"));
    const before = (await markerLines()).length;

    const { json, urls } = await toolsWithImportLog();
    expect(json.index.fresh).toBe(false);
    expect(json.index.reason).toMatch(/hello\.ts changed/);
    expect(json.tools.map((t: { description: string }) => t.description)).toEqual(["says hello, edited"]);
    const lines = await markerLines();
    expect(lines.length).toBe(before + 1);
    // Even a rebuild imports plugin code only in the validation child.
    expect(urls.filter((url) => HEAVY.test(url) || url.includes("hello-plugin"))).toEqual([]);

    const again = await cli(["tools", "--json"]);
    expect(again.json().index).toEqual({ fresh: true, reason: "fresh" });
    expect((await markerLines()).length).toBe(before + 1);
  });

  it("disable, enable and unlink refresh it: each following tools is fresh and right", { timeout: 180_000 }, async () => {
    const dir = await writePlugin();
    expect((await cli(["link", dir])).code).toBe(0);
    const disabled = await cli(["disable", "hello-plugin"]);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect((await cli(["tools", "--json"])).json()).toMatchObject({ tools: [], errors: [], index: { fresh: true } });
    const enabled = await cli(["enable", "hello-plugin"]);
    expect(enabled.code, enabled.stderr).toBe(0);
    const on = (await cli(["tools", "--json"])).json();
    expect(on.index).toEqual({ fresh: true, reason: "fresh" });
    expect(on.tools.map((t: { name: string }) => t.name)).toEqual(["hello_tool"]);
    const unlinked = await cli(["unlink", "hello-plugin"]);
    expect(unlinked.code, unlinked.stderr).toBe(0);
    const r = await cli(["tools", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ tools: [], errors: [], index: { fresh: true } });
  });

  it("marketplace installs and uninstalls (project scope) refresh it through the same mutation", { timeout: 180_000 }, async () => {
    const root = path.join(w.root, "market-acme");
    await w.write(path.join(root, catalogPath()), catalog("acme", [{ name: "hello", source: "./plugins/hello", version: "1.0.0", description: "Says hello" }]));
    for (const [rel, content] of Object.entries(pluginFiles("plugins/hello", "hello", ["acme_tool"]))) await w.write(path.join(root, rel), content);
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const installed = await cli(["install", "hello@acme", "--scope", "project"]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stderr).not.toMatch(/boot index could not be refreshed/);
    const check = await checkBootIndex({ home: w.home, xcshHome: w.xcshHome, env: {}, cwd: w.cwd });
    expect(check).toMatchObject({ state: "fresh", unvalidated: 0 });
    const listed = (await cli(["tools", "--json"])).json();
    expect(listed.index).toEqual({ fresh: true, reason: "fresh" });
    expect(listed.tools).toMatchObject([{ name: "acme_tool", provider: "xcsh-plugins", level: "project", plugin: "hello@acme" }]);
    expect((await cli(["uninstall", "hello@acme"])).code).toBe(0);
    expect((await cli(["tools", "--json"])).json()).toMatchObject({ tools: [], index: { fresh: true } });
  });

  it("a refresh that fails is a warning: the change stands and the host falls back to a scan", { timeout: 120_000 }, async () => {
    const dir = await writePlugin();
    const paths = xcshPaths({ home: w.home, xcshHome: w.xcshHome });
    // A non-empty folder where the index file goes: it can be neither read nor replaced.
    await w.write(path.join(paths.bootIndex, "blocker"), "x");
    const linked = await cli(["link", dir]);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stderr).toMatch(/warning: The change was made, but the boot index could not be refreshed/);
    const r = await cli(["tools", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().tools.map((t: { name: string }) => t.name)).toEqual(["hello_tool"]);
    expect(r.json().index.fresh).toBe(false);
  });
});
