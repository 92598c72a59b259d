/**
 * Claude Code's catalogs as they are in late 2026 (issue #28, points 1 and 3–6), through the
 * engine on fixtures of our own shaped like the public ones: `metadata.pluginRoot` resolved as
 * Claude Code does and `marketplace add` warning about entries whose folder is missing; `url`
 * sources with a `path`; `archive` sources over a loopback server with the tarball rules;
 * command-running kinds refused; `renames` followed by install and update; plugins without
 * plugin.json; versions from commit shas and the marketplace commit as `gitCommitSha`.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import { addMarketplace, installFromMarketplace, outdatedMarketplacePlugins, setMarketplacePluginEnabled, updateMarketplacePlugins, updateMarketplaces, type MarketplaceContext } from "../../src/marketplace/index.js";
import { TARBALL_CHECK_OPTION } from "../../src/plugins/tarball-check.js";
import { buildDist } from "../helpers/build-dist.js";
import { makeGitRemote } from "../helpers/git-remote.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { catalog, catalogPath, marketplaceCtx, officialShapedMarketplace, officialShapedPluginRepo, pluginFiles, toolModule, workflowsShapedMarketplace } from "../helpers/marketplace-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { tgzBytes } from "../reliability/helpers-tar.js";

let w: TmpWorld;
let ctx: MarketplaceContext;

beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
  ctx = marketplaceCtx(w);
});
afterEach(async () => {
  await w.cleanup();
});

const readJson = async (file: string) => JSON.parse(await readFile(file, "utf8"));
const installed = async () => (await readJson(path.join(w.xcshHome, "plugins/installed_plugins.json"))).plugins as Record<string, { version: string; gitCommitSha?: string; enabled?: boolean; installPath: string }[]>;

async function hostTools(): Promise<string[]> {
  const result = await discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: {}, providers: ["xcsh-plugins"] });
  expect(result.errors).toEqual([]);
  return result.tools.map((t) => t.tool.name).sort();
}

async function folderMarketplace(doc: Record<string, unknown>, files: Record<string, string | object>, flavour: "xcsh" | "claude" = "claude"): Promise<string> {
  const root = path.join(w.root, `market-${String(doc.name)}`);
  await w.write(path.join(root, catalogPath(flavour)), doc);
  for (const [rel, content] of Object.entries(files)) await w.write(path.join(root, rel), content);
  return root;
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: string; message: string } | undefined;
  expect(error, "expected a failure").toBeDefined();
  return error!;
}

describe("metadata.pluginRoot and missing sources", () => {
  it("./ sources are not prefixed again, bare names resolve under pluginRoot; add warns about a missing folder", async () => {
    const root = await folderMarketplace(
      catalog("rooted", [
        { name: "alpha", source: "./plugins/alpha" },
        { name: "beta", source: "beta" },
        { name: "gone", source: "./plugins/gone" },
      ], { metadata: { pluginRoot: "./plugins" } }),
      { ...pluginFiles("plugins/alpha", "alpha", ["alpha_tool"], { flavour: "claude", version: "1.0.0" }), ...pluginFiles("plugins/beta", "beta", ["beta_tool"], { flavour: "claude", version: "1.0.0" }) },
    );
    const added = await addMarketplace(ctx, root);
    expect(added.warnings.filter((x) => x.includes("ESOURCE_NOT_FOUND"))).toEqual([expect.stringContaining('plugin "gone": its source "./plugins/gone" (plugins/gone) does not exist')]);
    expect(added.warnings.some((x) => x.includes("alpha") || x.includes("beta"))).toBe(false);
    await installFromMarketplace(ctx, ["alpha@rooted", "beta@rooted"]);
    expect(await hostTools()).toEqual(["alpha_tool", "beta_tool"]);
    expect(added.missingSources).toEqual(["gone"]);
    expect((await failure(installFromMarketplace(ctx, ["gone@rooted"]))).code).toBe("ESOURCE_NOT_FOUND");
  });

  it("`marketplace add` says which entries cannot be installed, with the code, instead of plain success", async () => {
    const root = await folderMarketplace(catalog("half", [{ name: "here", source: "./plugins/here" }, { name: "gone", source: "./plugins/gone" }]), pluginFiles("plugins/here", "here", ["here_tool"], { flavour: "claude" }));
    const result = await runCli(["marketplace", "add", root], { cwd: w.cwd, home: w.home });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr + result.stdout).toContain('warning: plugin "gone": its source "./plugins/gone" (plugins/gone) does not exist in the marketplace repository; it cannot be installed (ESOURCE_NOT_FOUND)');
    expect(result.stdout).toContain("1 of them cannot be installed (source folder missing, ESOURCE_NOT_FOUND): gone");
  });
});

describe("a catalog shaped like the official one, from git", () => {
  it("adds, and installs in-repo (with and without plugin.json), url+path, git-subdir and whole-repo entries", async () => {
    const pluginRepo = await makeGitRemote(w.root, "plugin-repo", officialShapedPluginRepo(), ctx.env);
    const sha = await pluginRepo.head();
    const market = await makeGitRemote(w.root, "official", officialShapedMarketplace(pluginRepo.url, sha), ctx.env);
    const marketSha = await market.head();
    // Its reserved name is refused from anywhere but github.com/anthropics (as Claude Code does):
    // added under a name of the user's own, as a fork or mirror would be.
    await expect(addMarketplace(ctx, market.url)).rejects.toMatchObject({ code: "EMARKETPLACE_RESERVED" });
    const added = await addMarketplace(ctx, market.url, { name: "official-mirror" });
    expect(added.plugins).toEqual(["code-review", "clangd-lsp", "site-builder", "api-security", "whole-repo"]);
    expect(added.warnings.filter((x) => !x.includes("reserved"))).toEqual([]);

    const report = await installFromMarketplace(ctx, ["code-review@official-mirror", "clangd-lsp@official-mirror", "site-builder@official-mirror", "api-security@official-mirror", "whole-repo@official-mirror"]);
    expect(report.failed).toEqual([]);
    const reg = await installed();
    // In-repo, no version anywhere: the marketplace's commit, as Claude Code records it.
    expect(reg["code-review@official-mirror"]![0]).toMatchObject({ version: marketSha.slice(0, 12), gitCommitSha: marketSha });
    // No plugin.json at all (Claude Code's defaults): installs with the catalog's version.
    expect(reg["clangd-lsp@official-mirror"]![0]).toMatchObject({ version: "1.0.0", gitCommitSha: marketSha });
    // url with a path: that folder of the repository; the entry's defaultEnabled: false holds.
    expect(reg["site-builder@official-mirror"]![0]).toMatchObject({ version: sha.slice(0, 12), gitCommitSha: sha, enabled: false });
    expect(reg["api-security@official-mirror"]![0]).toMatchObject({ version: "1.5.5", gitCommitSha: sha });
    expect(reg["whole-repo@official-mirror"]![0]).toMatchObject({ version: sha.slice(0, 12), gitCommitSha: sha });
    const siteDir = reg["site-builder@official-mirror"]![0]!.installPath;
    expect(await readFile(path.join(siteDir, "skills/deploy/SKILL.md"), "utf8")).toContain("Deploy");
  });

  it("installing a renamed id installs the new one and says so", async () => {
    const pluginRepo = await makeGitRemote(w.root, "plugin-repo", officialShapedPluginRepo(), ctx.env);
    const market = await makeGitRemote(w.root, "official", officialShapedMarketplace(pluginRepo.url, await pluginRepo.head()), ctx.env);
    await addMarketplace(ctx, market.url, { name: "official-mirror" });
    const report = await installFromMarketplace(ctx, ["old-review@official-mirror"]);
    expect(report.items.map((i) => [i.op, i.id])).toEqual([["ADD", "code-review@official-mirror"]]);
    expect(report.items[0]!.reason).toContain("renamed from old-review@official-mirror");
    expect(report.warnings).toContainEqual(expect.stringContaining("ERENAMED old-review@official-mirror is now code-review@official-mirror"));
    expect(Object.keys(await installed())).toEqual(["code-review@official-mirror"]);
  });
});

describe("renames on update", () => {
  it("updating an old id moves it to the new id, keeping it disabled, and says so", async () => {
    const files = pluginFiles("plugins/old-name", "old-name", ["renamed_tool"], { flavour: "claude", version: "1.0.0" });
    const root = await folderMarketplace(catalog("moving", [{ name: "old-name", source: "./plugins/old-name" }]), files);
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["old-name@moving"]);
    await setMarketplacePluginEnabled(ctx, ["old-name@moving"], false);
    // The owner renames the plugin and records the rename.
    await w.write(path.join(root, catalogPath("claude")), catalog("moving", [{ name: "new-name", source: "./plugins/new-name" }], { renames: { "old-name": "new-name" } }));
    await w.write(path.join(root, "plugins/new-name/.claude-plugin/plugin.json"), { name: "new-name", version: "1.1.0" });
    await w.write(path.join(root, "plugins/new-name/tools/renamed_tool.mjs"), toolModule("renamed_tool"));
    await updateMarketplaces(ctx, "moving");
    expect(await outdatedMarketplacePlugins(ctx)).toMatchObject([{ id: "old-name@moving", outdated: true, reason: expect.stringContaining("renamed to new-name@moving") }]);
    const report = await updateMarketplacePlugins(ctx, ["old-name@moving"]);
    expect(report.failed).toEqual([]);
    expect(report.items.map((i) => [i.op, i.id]).sort()).toEqual([
      ["ADD", "new-name@moving"],
      ["REMOVE", "old-name@moving"],
    ]);
    expect(report.items.find((i) => i.op === "ADD")!.reason).toContain("old-name@moving was renamed to new-name@moving");
    const reg = await installed();
    expect(Object.keys(reg)).toEqual(["new-name@moving"]);
    expect(reg["new-name@moving"]![0]).toMatchObject({ version: "1.1.0", enabled: false });
    await setMarketplacePluginEnabled(ctx, ["new-name@moving"], true);
    expect(await hostTools()).toEqual(["renamed_tool"]);
  });
});

describe("archive sources", () => {
  let server: TestHttpServer;
  beforeEach(async () => {
    server = await startHttpServer();
  });
  afterEach(async () => {
    await server.close();
  });
  const plugin = (tool: string) =>
    tgzBytes([
      { name: "arch-plugin/", type: "dir" },
      { name: "arch-plugin/.claude-plugin/plugin.json", content: JSON.stringify({ name: "arch" }) },
      { name: "arch-plugin/tools/", type: "dir" },
      { name: `arch-plugin/tools/${tool}.mjs`, content: toolModule(tool) },
    ]);
  const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
  const archiveMarket = (source: Record<string, unknown>) => folderMarketplace(catalog("arch-market", [{ name: "arch", source: { source: "archive", ...source } }]), {});

  it("installs a pinned .tar.gz, its version the archive's sha256 when it names none", async () => {
    const bytes = plugin("archive_tool");
    server.set("/arch.tar.gz", bytes);
    const sri = `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
    await addMarketplace(ctx, await archiveMarket({ url: `${server.url}/arch.tar.gz`, sha256: sha256(bytes), integrity: sri }));
    await installFromMarketplace(ctx, ["arch@arch-market"]);
    expect((await installed())["arch@arch-market"]![0]!.version).toBe(sha256(bytes).slice(0, 12));
    expect(await hostTools()).toEqual(["archive_tool"]);
  });

  it("refuses bytes that differ from the pin (EINTEGRITY), a link out (ETARBALL_UNSAFE) and a zip (ETARBALL); nothing installed", async () => {
    const bytes = plugin("archive_tool");
    server.set("/arch.tar.gz", bytes);
    await addMarketplace(ctx, await archiveMarket({ url: `${server.url}/arch.tar.gz`, sha256: "0".repeat(64) }));
    expect((await failure(installFromMarketplace(ctx, ["arch@arch-market"]))).code).toBe("EINTEGRITY");

    server.set(
      "/evil.tar.gz",
      tgzBytes([
        { name: "p/tools/", type: "dir" },
        { name: "p/tools/x.mjs", type: "symlink", linkname: "../../../../etc/passwd" },
      ]),
    );
    server.set("/p.zip", Buffer.concat([Buffer.from("PK\u0003\u0004"), Buffer.alloc(64)]));
    const evil = await folderMarketplace(
      catalog("evil-market", [
        { name: "evil", source: { source: "archive", url: `${server.url}/evil.tar.gz` } },
        { name: "zipped", source: { source: "archive", url: `${server.url}/p.zip` } },
      ]),
      {},
    );
    await addMarketplace(ctx, evil);
    expect((await failure(installFromMarketplace(ctx, ["evil@evil-market"]))).code).toBe("ETARBALL_UNSAFE");
    // The settings' limits (limits.tarballEntries here) hold for archives as for npm tarballs.
    const small = { ...ctx, npmOptions: { [TARBALL_CHECK_OPTION]: { limits: { entries: 2 } } } };
    server.set("/ok.tar.gz", bytes);
    await addMarketplace(ctx, await folderMarketplace(catalog("limited", [{ name: "arch", source: { source: "archive", url: `${server.url}/ok.tar.gz` } }]), {}));
    expect((await failure(installFromMarketplace(small, ["arch@limited"]))).code).toBe("ETARBALL_TOO_LARGE");
    // The download itself stops at the unpacked-bytes limit (by the size the server declares, or as the bytes come).
    const tiny = { ...ctx, npmOptions: { [TARBALL_CHECK_OPTION]: { limits: { unpackedBytes: 64 } } } };
    const tooBig = await failure(installFromMarketplace(tiny, ["arch@limited"]));
    expect(tooBig).toMatchObject({ code: "ETARBALL_TOO_LARGE", message: expect.stringMatching(/: refused, the archive is (\d+ bytes, )?more than the limit of 64( bytes)? \(setting limits\.tarballUnpackedBytes\)/) });
    expect((await failure(installFromMarketplace(ctx, ["zipped@evil-market"]))).code).toBe("ETARBALL");
    await expect(readFile(path.join(w.xcshHome, "plugins/installed_plugins.json"), "utf8")).rejects.toThrow();
  });

  it("a source kind that would run a command is skipped at add and refused at install with ESOURCE_COMMAND", async () => {
    const root = await folderMarketplace(catalog("cmd-market", [{ name: "built", source: { source: "command", command: "make plugin" } }]), {});
    const added = await addMarketplace(ctx, root);
    expect(added.warnings).toContainEqual(expect.stringContaining("(ESOURCE_COMMAND); this plugin entry is skipped"));
    const error = await failure(installFromMarketplace(ctx, ["built@cmd-market"]));
    expect(error.code).toBe("ESOURCE_COMMAND");
    expect(error.message).toContain("would run a command");
  });
});

describe("an npm source whose package is not a package name", () => {
  it("validate warns as Claude Code accepts it; add skips it and install refuses it (EPACKAGE_NAME): npm would read it as a path", async () => {
    const root = await folderMarketplace(catalog("npm-market", [{ name: "odd", source: { source: "npm", package: "../../outside" } }]), {});
    const validated = await runCli(["validate", root, "--json"], { cwd: w.cwd, home: w.home });
    expect(validated.code, validated.stdout).toBe(0);
    expect(JSON.stringify(validated.json())).toContain("EPACKAGE_NAME");
    const added = await addMarketplace(ctx, root);
    expect(added.warnings).toContainEqual(expect.stringContaining("EPACKAGE_NAME"));
    const error = await failure(installFromMarketplace(ctx, ["odd@npm-market"]));
    expect(error.code).toBe("EPACKAGE_NAME");
  });
});

describe("plugins without plugin.json", () => {
  it("installs and discovery loads it (Claude Code's defaults)", async () => {
    const root = await folderMarketplace(catalog("bare", [{ name: "no-manifest", source: "./plugins/no-manifest", version: "2.0.0" }]), {
      "plugins/no-manifest/tools/bare_tool.mjs": toolModule("bare_tool"),
      "plugins/no-manifest/skills/s/SKILL.md": "---\nname: s\ndescription: a skill\n---\nS.\n",
    });
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["no-manifest@bare"]);
    expect(await hostTools()).toEqual(["bare_tool"]);
  });

  it("`validate` accepts a plugin folder with only default component folders, and an official-shaped marketplace exits 0", async () => {
    const folder = path.join(w.root, "skills-only");
    await w.write(path.join(folder, "skills/s/SKILL.md"), "---\nname: s\ndescription: a skill\n---\nS.\n");
    await w.write(path.join(folder, "commands/c.md"), "---\ndescription: c\n---\nC.\n");
    const plugin = await runCli(["validate", folder], { cwd: w.cwd, home: w.home });
    expect(plugin.code, plugin.stderr + plugin.stdout).toBe(0);

    const market = path.join(w.root, "official-shaped");
    for (const [rel, content] of Object.entries(officialShapedMarketplace("https://github.com/fixture/plugins.git", "30287f5e3f122a646d1ac5ca3ab96e130c52a3ad"))) await w.write(path.join(market, rel), content);
    const result = await runCli(["validate", market], { cwd: w.cwd, home: w.home });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stdout + result.stderr).toContain("EMARKETPLACE_RESERVED");

    const workflows = path.join(w.root, "workflows-shaped");
    for (const [rel, content] of Object.entries(workflowsShapedMarketplace())) await w.write(path.join(workflows, rel), content);
    const clean = await runCli(["validate", workflows, "--json"], { cwd: w.cwd, home: w.home });
    expect(clean.code, clean.stderr + clean.stdout).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, errors: [], warnings: [] });
  });
});
