/**
 * Install semantics that follow Claude Code (issue 45 point 5), beyond the recorded cases of
 * conformance-install.test.ts: the hostile and edge cases of each class — reserved marketplace
 * names by source, dependencies (cycles, foreign marketplaces, an install already there, a range
 * not met), a strict:false entry's skills list naming places outside the plugin, and warnings
 * that must name the installed folder, never the scratch copy.
 */
import { mkdir, readdir, readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addMarketplace, installFromMarketplace, type MarketplaceContext } from "../../src/marketplace/index.js";
import { catalog, catalogPath, marketplaceCtx } from "../helpers/marketplace-fixtures.js";
import { makeGitRemote } from "../helpers/git-remote.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
let ctx: MarketplaceContext;
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-install-semantics-");
  ctx = marketplaceCtx(w, { approveExecutables: async () => {} });
});
afterEach(async () => w.cleanup());

/** A Claude Code folder marketplace at `<root>/<dir>`: the catalog and each plugin's files. */
async function folder(dir: string, name: string, entries: Record<string, unknown>[], files: Record<string, string | object>): Promise<string> {
  const root = path.join(w.root, dir);
  await w.write(path.join(root, catalogPath("claude")), catalog(name, entries));
  for (const [rel, content] of Object.entries(files)) await w.write(path.join(root, rel), content);
  return root;
}
/** A plugin of `folder`: plugin.json and one command. */
function plugin(name: string, json: Record<string, unknown> = {}): Record<string, string | object> {
  return { [`plugins/${name}/.claude-plugin/plugin.json`]: { name, version: "1.0.0", ...json }, [`plugins/${name}/commands/${name}.md`]: `---\ndescription: ${name}\n---\nDo ${name}.\n` };
}
const entry = (name: string, extra: Record<string, unknown> = {}) => ({ name, source: `./plugins/${name}`, ...extra });
const registry = async () => JSON.parse(await readFile(path.join(w.xcshHome, "plugins", "installed_plugins.json"), "utf8")).plugins as Record<string, { version: string; auto?: boolean; installPath: string; enabled?: boolean }[]>;

describe("reserved marketplace names (Claude Code refuses them from anywhere but github.com/anthropics)", () => {
  for (const name of ["claude-plugins-official", "anthropic-agent-skills", "knowledge-work-plugins"]) {
    it(`refuses "${name}" from a folder with EMARKETPLACE_RESERVED, adding nothing`, async () => {
      const root = await folder(name, name, [entry("notes")], plugin("notes"));
      const refused = addMarketplace(ctx, root);
      await expect(refused).rejects.toMatchObject({ code: "EMARKETPLACE_RESERVED", exitCode: 2 });
      await expect(refused).rejects.toThrow(/is reserved for official Anthropic marketplaces and can only be used with GitHub sources from the 'anthropics' organization/);
      await expect(readFile(path.join(w.xcshHome, "marketplaces.json"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    });
  }

  it("refuses it from a git remote that is not github.com/anthropics (a look-alike path included)", async () => {
    const remote = await makeGitRemote(w.root, "anthropics", { [catalogPath("claude")]: catalog("agent-skills", [entry("notes")]), ...plugin("notes") }, ctx.env);
    expect(remote.url).toContain("anthropics");
    await expect(addMarketplace(ctx, remote.url)).rejects.toMatchObject({ code: "EMARKETPLACE_RESERVED" });
  });

  it("adds it under a name of the user's own (--name), and a name that only resembles one is a warning", async () => {
    const root = await folder("official", "claude-plugins-official", [entry("notes")], plugin("notes"));
    await expect(addMarketplace(ctx, root, { name: "my-mirror" })).resolves.toMatchObject({ name: "my-mirror" });
    const alike = await folder("alike", "anthropic-tools", [entry("notes")], plugin("notes"));
    const added = await addMarketplace(ctx, alike);
    expect(added.warnings.join("\n")).toMatch(/EMARKETPLACE_RESERVED|looks like one of Anthropic's/);
  });
});

describe("dependencies a plugin.json declares", () => {
  it("a cycle installs each plugin once, the one asked for not marked auto", async () => {
    const root = await folder("cycle", "cycle", [entry("a"), entry("b")], { ...plugin("a", { dependencies: ["b"] }), ...plugin("b", { dependencies: ["a@cycle"] }) });
    await addMarketplace(ctx, root);
    const report = await installFromMarketplace(ctx, ["a@cycle"]);
    expect(report.items.map((i) => i.id).sort()).toEqual(["a@cycle", "b@cycle"]);
    const reg = await registry();
    expect(reg["a@cycle"]![0]!.auto).toBeUndefined();
    expect(reg["b@cycle"]![0]!.auto).toBe(true);
  });

  it("a dependency already installed is left as it is (not reinstalled, not marked auto)", async () => {
    const root = await folder("kept", "kept", [entry("app"), entry("lib")], { ...plugin("app", { dependencies: ["lib"] }), ...plugin("lib") });
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["lib@kept"]);
    const before = (await registry())["lib@kept"];
    const report = await installFromMarketplace(ctx, ["app@kept"]);
    expect(report.items.map((i) => i.id)).toEqual(["app@kept"]);
    expect((await registry())["lib@kept"]).toEqual(before);
  });

  it("one the catalog does not list, or in an allowed marketplace that is not added, is a warning naming it and how to get it; the plugin is installed", async () => {
    const root = await folder("lonely", "lonely", [entry("app")], plugin("app", { dependencies: ["gone", { name: "far", marketplace: "elsewhere" }] }));
    await w.write(path.join(root, catalogPath("claude")), catalog("lonely", [entry("app")], { allowCrossMarketplaceDependenciesOn: ["elsewhere"] }));
    await addMarketplace(ctx, root);
    const report = await installFromMarketplace(ctx, ["app@lonely"]);
    expect(report.items.map((i) => i.id)).toEqual(["app@lonely"]);
    expect(report.warnings).toContainEqual(expect.stringContaining('WDEPENDENCY_MISSING dependency "gone@lonely" was not installed'));
    expect(report.warnings).toContainEqual(expect.stringContaining('WDEPENDENCY_MISSING dependency "far@elsewhere" was not installed'));
  });

  it("one in another added marketplace is installed only when the catalog allows it (allowCrossMarketplaceDependenciesOn), as Claude Code", async () => {
    const lib = await folder("lib-market", "lib-market", [entry("lib")], plugin("lib"));
    const files = { ...plugin("app", { dependencies: ["lib@lib-market"] }), ...plugin("app2", { dependencies: [{ name: "lib", marketplace: "lib-market" }] }) };
    const closed = await folder("closed", "closed", [entry("app")], files);
    const open = await folder("open", "open", [entry("app2")], files);
    await w.write(path.join(open, catalogPath("claude")), catalog("open", [entry("app2")], { allowCrossMarketplaceDependenciesOn: ["lib-market"] }));
    for (const root of [lib, closed, open]) await addMarketplace(ctx, root);
    const refused = await installFromMarketplace(ctx, ["app@closed"]);
    expect(refused.items.map((i) => i.id)).toEqual(["app@closed"]);
    expect(refused.warnings).toContainEqual(expect.stringContaining('WDEPENDENCY_FOREIGN dependency "lib@lib-market" was not installed: marketplace "closed" does not allow'));
    const allowed = await installFromMarketplace(ctx, ["app2@open"]);
    expect(allowed.items.map((i) => i.id)).toEqual(["app2@open", "lib@lib-market"]);
    expect((await registry())["lib@lib-market"]![0]!.auto).toBe(true);
  });

  it("a range the catalog's version does not meet installs it as Claude Code does, with WDEPENDENCY_RANGE", async () => {
    const root = await folder("ranged", "ranged", [entry("app"), entry("lib")], { ...plugin("app", { dependencies: ["lib@ranged@^2.0.0"] }), ...plugin("lib", { version: "1.4.0" }) });
    await addMarketplace(ctx, root);
    const report = await installFromMarketplace(ctx, ["app@ranged"]);
    expect((await registry())["lib@ranged"]![0]).toMatchObject({ version: "1.4.0", auto: true });
    expect(report.warnings).toContainEqual(expect.stringMatching(/WDEPENDENCY_RANGE app@ranged asks for lib@\^2\.0\.0, but marketplace "ranged" has 1\.4\.0/));
  });

  it("a dependency whose plugin is refused refuses the whole install: nothing is installed", async () => {
    const root = await folder("broken", "broken", [entry("app"), entry("lib")], { ...plugin("app", { dependencies: ["lib"] }), ...plugin("lib", { hooks: "./hooks.txt" }), "plugins/lib/hooks.txt": "{}" });
    await addMarketplace(ctx, root);
    await expect(installFromMarketplace(ctx, ["app@broken"])).rejects.toMatchObject({ code: "EPLUGIN_INVALID" });
    await expect(registry()).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("a strict:false entry's skills list", () => {
  it("keeps only the listed skill folders: one without SKILL.md or the skills folder itself is skipped; `..` and a symlink out are refused", async () => {
    const files: Record<string, string> = {};
    for (const s of ["one", "two"]) files[`skills/${s}/SKILL.md`] = `---\nname: ${s}\ndescription: skill ${s}\n---\nDo ${s}.\n`;
    const entries = [
      { name: "bundle", source: "./", strict: false, version: "1.0.0", skills: ["./skills/one", "./skills/none", "./skills", "./"] },
      { name: "escape", source: "./", strict: false, skills: ["../outside-skill"] },
    ];
    const root = await folder("loose", "loose", entries, files);
    await mkdir(path.join(root, "skills", "none"));
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["bundle@loose"]);
    const installed = (await registry())["bundle@loose"]![0]!.installPath;
    expect((await readdir(path.join(installed, "skills"))).sort()).toEqual(["one"]);
    // A listed path with `..` is refused when the catalog is read, before anything is fetched.
    await expect(installFromMarketplace(ctx, ["escape@loose"])).rejects.toMatchObject({ code: "EENTRY_ESCAPE" });
  });

  it("a listed skill that is a symlink out of the plugin refuses the install (the copy never follows it)", async () => {
    const outside = path.join(w.root, "outside-skill");
    await w.write(path.join(outside, "SKILL.md"), "---\nname: outside\ndescription: not the plugin's\n---\nx\n");
    const root = await folder("linked", "linked", [{ name: "bundle", source: "./", strict: false, skills: ["./skills/link"] }], { "skills/one/SKILL.md": "---\nname: one\ndescription: one\n---\nx\n" });
    await symlink(outside, path.join(root, "skills", "link"));
    await addMarketplace(ctx, root);
    await expect(installFromMarketplace(ctx, ["bundle@linked"])).rejects.toMatchObject({ code: "EENTRY_ESCAPE" });
    await expect(registry()).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("an entry that is not strict:false keeps the folder as it is", async () => {
    const root = await folder("strict", "strict", [entry("p", { skills: ["./skills/one"] })], { ...plugin("p"), "plugins/p/skills/one/SKILL.md": "---\nname: one\ndescription: one\n---\nx\n", "plugins/p/skills/two/SKILL.md": "---\nname: two\ndescription: two\n---\nx\n" });
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["p@strict"]);
    expect((await readdir(path.join((await registry())["p@strict"]![0]!.installPath, "skills"))).sort()).toEqual(["one", "two"]);
  });
});

describe("install warnings name the installed folder", () => {
  it("every warning about a file names it under the installed path, none the scratch copy", async () => {
    const files = {
      ...plugin("warned"),
      "plugins/warned/commands/bare.md": "no frontmatter\n",
      "plugins/warned/skills/s/SKILL.md": "---\nname: s\n---\nbody\n",
      "plugins/warned/hooks/hooks.json": { hooks: { PostToolUse: [{ hooks: [{ type: "command", command: "${CLAUDE_PLUGIN_ROOT}/hooks/missing.sh" }] }] } },
    };
    const root = await folder("warned", "warned", [entry("warned")], files);
    await addMarketplace(ctx, root);
    const report = await installFromMarketplace(ctx, ["warned@warned"]);
    const installPath = (await registry())["warned@warned"]![0]!.installPath;
    const about = report.warnings.filter((x) => /ENO_DESCRIPTION|EENTRY_NOT_FOUND|EHOOK_UNQUOTED_ROOT/.test(x));
    expect(about.length).toBeGreaterThanOrEqual(4);
    for (const warning of about) expect(warning).toContain(installPath + path.sep);
    for (const warning of report.warnings) expect(warning).not.toMatch(/scratch|journal|[/\\]copy[/\\]/);
    expect(about.find((x) => x.includes("EENTRY_NOT_FOUND"))).toContain(path.join(installPath, "hooks", "missing.sh"));
  });

  it("a plugin asking for userConfig installs as in Claude Code, with WHOST_USER_CONFIG naming its installed plugin.json and the options the host will not fill", async () => {
    const userConfig = { api_token: { type: "string", title: "API token", sensitive: true } };
    const files = { ...plugin("keyed", { userConfig }), "plugins/keyed/.mcp.json": { mcpServers: { keyed: { command: "keyed-server", args: ["--token", "${user_config.api_token}"] } } } };
    const root = await folder("keyed", "keyed", [entry("keyed")], files);
    await addMarketplace(ctx, root);
    const report = await installFromMarketplace(ctx, ["keyed@keyed"]);
    const installPath = (await registry())["keyed@keyed"]![0]!.installPath;
    const warning = report.warnings.find((x) => x.includes("WHOST_USER_CONFIG"));
    expect(warning).toContain(`WHOST_USER_CONFIG ${path.join(installPath, ".claude-plugin", "plugin.json")}: /userConfig: keyed declares`);
    expect(warning).toContain('declares userConfig "api_token" (sensitive) (.mcp.json uses ${user_config.api_token})');
    expect(warning).not.toMatch(/scratch|journal|[/\\]copy[/\\]/);
  });
});

