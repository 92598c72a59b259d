/**
 * `link` reuses what it checked before (issue 44: the author's loop is link, try, unlink, edit,
 * link): the boot index keeps the records `link` made of a linked folder's modules after `unlink`,
 * and a later `link` of that folder imports nothing while the folder is as it was (its signature:
 * every entry but `.git`, and node_modules' own entries). Each test here is a way that shortcut
 * could answer for bytes it never checked: the entry changed, a file the entry imports changed, a
 * file added, a record made by the refresh's own (unfenced) import, a record of a failure.
 * Imports are counted by the tool module itself (a line appended to a file outside the home at
 * each import). Built CLI, temp HOME, no registry.
 */
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist, modulesOfLoadedFiles } from "../helpers/build-dist.js";
import { cliArgv, hermeticEnv, runCli, runProcess } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-linkrec-");
}, 120_000);
afterEach(async () => {
  await w.cleanup();
});

const NAME = "x-loop";
const folder = () => path.join(w.root, "dev", "loop");
const counter = () => path.join(w.root, "imports.log");
const entry = () => path.join(folder(), "tools", "index.js");
const helper = () => path.join(folder(), "lib", "helper.js");
const modulesFile = () => path.join(w.home, ".xcsh", "plugins", ".xcsh-tools", "boot-modules.json");

/** The tool: counts its imports, takes its description from lib/helper.js. */
const toolSource = (extra = "") =>
  `import { appendFileSync } from "node:fs";\nimport { description } from "../lib/helper.js";\nappendFileSync(${JSON.stringify(counter())}, "import\\n");\n${extra}export default (api) => ({ name: "loop_tool", label: "Loop", description, parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`;

async function pluginFolder(): Promise<void> {
  await w.write(path.join(folder(), "package.json"), { name: NAME, version: "1.0.0", type: "module", xcsh: { tools: "./tools/index.js" } });
  await w.write(helper(), `export const description = "first";\n`);
  await w.write(entry(), toolSource());
}

async function imports(): Promise<number> {
  return (await readFile(counter(), "utf8").catch(() => "")).split("\n").filter(Boolean).length;
}

async function cli(args: string[], code = 0) {
  const r = await runCli([...args, "--json"], { cwd: w.cwd, home: w.home });
  expect(r.code, `${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(code);
  return r;
}

/** The description `tools --json` (the boot index) gives the linked tool. */
async function described(): Promise<string | undefined> {
  const tools = (await cli(["tools"])).json().tools as { name: string; description: string }[];
  return tools.find((t) => t.name === "loop_tool")?.description;
}

/** Link, unlink: the folder's records stay; returns the imports counted by then. */
async function linkedOnceThenUnlinked(): Promise<number> {
  await pluginFolder();
  await cli(["link", folder()]);
  const first = await imports();
  await cli(["unlink", NAME]);
  const kept = JSON.parse(await readFile(modulesFile(), "utf8")) as { modules: Record<string, Record<string, { linked?: string }>> };
  expect(Object.values(kept.modules).some((byRuntime) => Object.values(byRuntime).some((r) => r.linked !== undefined))).toBe(true);
  return first;
}

/** Link the folder again: the imports counted by then, and the description the index gives its tool. */
async function linkedAgainShows(importsBy: number, description: string): Promise<void> {
  await cli(["link", folder()]);
  expect(await imports()).toBe(importsBy);
  expect(await described()).toBe(description);
}

describe("link after unlink of the same folder imports nothing", () => {
  it("the first link imports the tool once (its check, recalled by the refresh), a link of the unchanged folder again not at all", async () => {
    expect(await linkedOnceThenUnlinked()).toBe(1);
    await cli(["link", folder()]);
    expect(await imports()).toBe(1);
    expect(await described()).toBe("first");
    await cli(["unlink", NAME]);
    await cli(["link", folder()]);
    expect(await imports()).toBe(1);
  }, 120_000);
});

describe("a link its records answer loads only what it runs", () => {
  it("the package's static checks, but not the module checker, the restore's chunk (host differences, team files) or the marketplace registry", async () => {
    expect(await linkedOnceThenUnlinked()).toBe(1);
    // Which modules the process loaded: a resolve hook logs every URL (as cheap-changes.test.ts does).
    const log = path.join(w.root, "resolved.log");
    const hooks = await w.write(path.join(w.root, "hooks", "log-hooks.mjs"), `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, result.url + "\\n");\n  return result;\n}\n`);
    const register = await w.write(path.join(w.root, "hooks", "register.mjs"), `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
    const r = await runProcess(process.execPath, ["--import", register, ...cliArgv(w.home, ["link", folder()])], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(await imports()).toBe(1);
    const modules = modulesOfLoadedFiles((await readFile(log, "utf8")).split("\n").filter(Boolean));
    expect(modules).toContain("/src/validate/static-checks.ts");
    // Of the team-set engine, only the notes the query chunk holds (as for the state commands).
    expect(modules.filter((m) => /\/src\/(validate\/(module-check|host-differences|team-files)\.ts|teamset\/(?!notes\.ts)|marketplace\/)/.test(m))).toEqual([]);
  }, 120_000);
});

describe("a feature that is off (link checks every module the plugin declares)", () => {
  const feature = () => path.join(folder(), "features", "extra.js");
  const featureCounter = () => path.join(w.root, "feature-imports.log");
  const featureSource = (extra = "") =>
    `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(featureCounter())}, "import\\n");\n${extra}export default (api) => ({ name: "loop_extra", label: "Extra", description: "extra", parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`;
  const featureImports = async () => (await readFile(featureCounter(), "utf8").catch(() => "")).split("\n").filter(Boolean).length;
  async function pluginWithFeature(): Promise<void> {
    await pluginFolder();
    await w.write(path.join(folder(), "package.json"), { name: NAME, version: "1.0.0", type: "module", xcsh: { tools: "./tools/index.js", features: { extra: { description: "an extra tool", default: false, tools: ["./features/extra.js"] } } } });
    await w.write(feature(), featureSource());
  }

  /** Another plugin folder: linked first, it makes the next link one written by hand (a lockfile exists). */
  async function otherPlugin(): Promise<string> {
    const other = path.join(w.root, "dev", "other");
    await w.write(path.join(other, "package.json"), { name: "x-other", version: "1.0.0", type: "module", xcsh: { tools: "./tools/index.js" } });
    await w.write(path.join(other, "tools", "index.js"), `export default (api) => ({ name: "other_tool", label: "Other", description: "other", parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`);
    return other;
  }

  /** Two rounds of unlink and link of the unchanged folder, then the feature turned on: no import at all (`counts`: the imports by then). */
  async function relinkedImportNothing(counts: [number, number]): Promise<void> {
    for (let round = 0; round < 2; round++) {
      await cli(["unlink", NAME]);
      await cli(["link", folder()]);
      expect([await imports(), await featureImports()]).toEqual(counts);
    }
    await cli(["features", NAME, "--enable", "extra"]);
    expect(await featureImports()).toBe(counts[1]);
  }

  it("is recorded as link checked it: a link of the unchanged folder imports neither module, and turning the feature on imports nothing either", async () => {
    await pluginWithFeature();
    await cli(["link", folder()]);
    expect([await imports(), await featureImports()]).toEqual([1, 1]);
    await cli(["unlink", NAME]);
    await cli(["link", folder()]);
    expect([await imports(), await featureImports()]).toEqual([1, 1]);
    await cli(["features", NAME, "--enable", "extra"]);
    expect(await featureImports()).toBe(1);
    const tools = (await cli(["tools"])).json().tools as { name: string }[];
    expect(tools.map((t) => t.name).sort()).toEqual(["loop_extra", "loop_tool"]);
  }, 120_000);

  it("edited after the link: imported again at the next link, and refused with EVALIDATE once it throws", async () => {
    await pluginWithFeature();
    await cli(["link", folder()]);
    await cli(["unlink", NAME]);
    await writeFile(feature(), featureSource("// edited\n"));
    await cli(["link", folder()]);
    expect(await featureImports()).toBe(2);
    await cli(["unlink", NAME]);
    await writeFile(feature(), featureSource(`throw new Error("feature is broken");\n`));
    const refused = await cli(["link", folder()], 1);
    expect(refused.json().error).toMatchObject({ code: "EVALIDATE", message: expect.stringContaining("feature is broken") });
  }, 120_000);

  // The first link of a home reifies (npm's installer checks the plugin in a staged node_modules);
  // a link written by hand (direct-edit.ts: a plugins folder with a lockfile already) checks it in
  // the folder itself, whose path names no node_modules: the module was never recorded.
  it("linked by hand into a plugins folder that has plugins already: recorded too, a link of the unchanged folder imports neither module", async () => {
    await cli(["link", await otherPlugin()]);
    await pluginWithFeature();
    await cli(["link", folder()]);
    expect([await imports(), await featureImports()]).toEqual([1, 1]);
    await relinkedImportNothing([1, 1]);
  }, 120_000);

  it("a scoped plugin linked by hand: its untaken module recorded at its place below @scope/, a link of the unchanged folder imports nothing", async () => {
    await cli(["link", await otherPlugin()]);
    await pluginWithFeature();
    await w.write(path.join(folder(), "package.json"), { name: "@x/loop", version: "1.0.0", type: "module", xcsh: { tools: "./tools/index.js", features: { extra: { description: "an extra tool", default: false, tools: ["./features/extra.js"] } } } });
    await cli(["link", folder()]);
    const records = JSON.parse(await readFile(modulesFile(), "utf8")) as { modules: Record<string, Record<string, { file: string; linked?: string }>> };
    const extra = Object.values(records.modules[path.join(folder(), "features", "extra.js")] ?? {})[0];
    expect(extra?.file).toBe(path.join(w.home, ".xcsh", "plugins", "node_modules", "@x", "loop", "features", "extra.js"));
    expect(extra?.linked).toBeDefined();
    await cli(["unlink", "@x/loop"]);
    await cli(["link", folder()]);
    expect([await imports(), await featureImports()]).toEqual([1, 1]);
  }, 120_000);

  // Its own bytes unchanged, its record from the first link was kept (keepIdleRecords) with the
  // folder's signature of then: every later link of the unchanged folder imported it again.
  it("unchanged while another file of the folder was edited: checked again once, then a link of the unchanged folder imports neither module", async () => {
    await pluginWithFeature();
    await cli(["link", folder()]);
    await cli(["unlink", NAME]);
    await writeFile(helper(), `export const description = "second";\n`);
    await cli(["link", folder()]);
    expect([await imports(), await featureImports()]).toEqual([2, 2]);
    expect(await described()).toBe("second");
    await relinkedImportNothing([2, 2]);
  }, 120_000);

  it("a file of the folder edited twice, the feature's module never: each edit checks it once, the unchanged folder after that not", async () => {
    await pluginWithFeature();
    await cli(["link", folder()]);
    for (const [i, text] of ["second", "third"].entries()) {
      await cli(["unlink", NAME]);
      await writeFile(helper(), `export const description = "${text}";\n`);
      await cli(["link", folder()]);
      expect(await featureImports()).toBe(i + 2);
      await cli(["unlink", NAME]);
      await cli(["link", folder()]);
      expect([await imports(), await featureImports()]).toEqual([i + 2, i + 2]);
      expect(await described()).toBe(text);
    }
  }, 180_000);
});

describe("a changed folder is checked again", () => {
  it("changed bytes of the entry: imported again; broken ones refused with EVALIDATE, nothing linked", async () => {
    await linkedOnceThenUnlinked();
    await writeFile(entry(), toolSource(`throw new Error("entry is broken");\n`));
    const refused = await cli(["link", folder()], 1);
    expect(refused.json().error).toMatchObject({ code: "EVALIDATE", message: expect.stringContaining("entry is broken") });
    expect(await imports()).toBe(2);
    await writeFile(entry(), toolSource("// fixed\n"));
    await cli(["link", folder()]);
    expect(await imports()).toBe(3);
  }, 120_000);

  it("a file the entry imports changed (the entry's own bytes are the same): imported again, the new description indexed", async () => {
    await linkedOnceThenUnlinked();
    await writeFile(helper(), `export const description = "second, longer";\n`);
    await linkedAgainShows(2, "second, longer");
  }, 120_000);

  it("a file the entry imports now throws: refused with EVALIDATE", async () => {
    await linkedOnceThenUnlinked();
    await writeFile(helper(), `export const description = "first";\nthrow new Error("helper is broken");\n`);
    const refused = await cli(["link", folder()], 1);
    expect(refused.json().error).toMatchObject({ code: "EVALIDATE", message: expect.stringContaining("helper is broken") });
  }, 120_000);

  it("a file added, or one removed, anywhere in the folder (node_modules' own entries included): imported again", async () => {
    await linkedOnceThenUnlinked();
    await w.write(path.join(folder(), "lib", "new.js"), "export {};\n");
    await cli(["link", folder()]);
    expect(await imports()).toBe(2);
    await cli(["unlink", NAME]);
    await rm(path.join(folder(), "lib", "new.js"));
    await cli(["link", folder()]);
    expect(await imports()).toBe(3);
    await cli(["unlink", NAME]);
    // A package put into the folder's node_modules (as `npm install` does; the link then goes through npm's installer).
    await w.write(path.join(folder(), "node_modules", "stray", "package.json"), { name: "stray", version: "1.0.0" });
    await cli(["link", folder()]);
    expect(await imports()).toBe(4);
  }, 120_000);

  it("a folder with a symlink among its own files (its target's edits would not show): imported at every link", async () => {
    await pluginFolder();
    const shared = path.join(w.root, "shared");
    await mkdir(shared, { recursive: true });
    await writeFile(path.join(shared, "helper.js"), `export const description = "from a linked folder";\n`);
    await rm(helper());
    await symlink(path.join(shared, "helper.js"), helper());
    await cli(["link", folder()]);
    await cli(["unlink", NAME]);
    await writeFile(path.join(shared, "helper.js"), `export const description = "edited where the link leads";\n`);
    await linkedAgainShows(2, "edited where the link leads");
  }, 120_000);

  it("a record the refresh made by its own import (not link's fenced check) is not reused by a later link", async () => {
    await linkedOnceThenUnlinked();
    await cli(["link", folder()]);
    expect(await imports()).toBe(1);
    // Edited while linked: the next refresh (any change, here `disable` then `enable`) imports it in its own child.
    await writeFile(helper(), `export const description = "edited while linked";\n`);
    await writeFile(entry(), toolSource("// edited while linked\n"));
    await cli(["disable", NAME]);
    await cli(["enable", NAME]);
    const before = await imports();
    await cli(["unlink", NAME]);
    await cli(["link", folder()]);
    expect(await imports()).toBeGreaterThan(before);
  }, 120_000);
});
