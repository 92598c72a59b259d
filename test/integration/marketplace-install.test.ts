/**
 * Installing marketplace plugins, user and project scope: every plugin source kind (relative in a
 * folder and in a git marketplace, url with a sha pin off the tip, git-subdir, npm on the test
 * Verdaccio), shadowing, upgrades when the catalog version or the pinned sha changes, cache keyed
 * by content, uninstall with cache references shared across scopes and projects — and the tools
 * are found by the host entry `discoverAndLoadCustomTools`.
 */
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import {
  addMarketplace,
  installFromMarketplace,
  isMarketplaceTarget,
  listMarketplacePlugins,
  outdatedMarketplacePlugins,
  setMarketplacePluginEnabled,
  uninstallMarketplacePlugin,
  updateMarketplacePlugins,
  updateMarketplaces,
  type MarketplaceContext,
} from "../../src/marketplace/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { makeGitRemote } from "../helpers/git-remote.js";
import { startHttpServer } from "../helpers/http-server.js";
import { catalog, catalogPath, marketplaceCtx, pluginFiles, toolModule } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { makeTmpWorld, writeTrustRecord, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let w: TmpWorld;
let ctx: MarketplaceContext;
const prefix = `mk${Date.now().toString(36)}`;

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
}, 180_000);
afterAll(async () => {
  await reg?.dispose();
});
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
  ctx = marketplaceCtx(w, { npmOptions: { registry: reg.url, cache: path.join(w.home, ".npm", "_cacache") } });
});
afterEach(async () => {
  await w.cleanup();
});

const userRegistry = () => path.join(w.xcshHome, "plugins/installed_plugins.json");
const projectRegistry = (cwd = w.cwd) => path.join(cwd, ".xcsh/plugins/installed_plugins.json");
const readJson = async (file: string) => JSON.parse(await readFile(file, "utf8"));
const cacheDirs = async () => (await readdir(path.join(w.xcshHome, "plugins/cache/plugins")).catch(() => [])).sort();

/** The tools a host would load from `cwd`, with their level and the text `execute` returns. */
async function hostTools(cwd = w.cwd): Promise<{ name: string; level: string | undefined; plugin: string | undefined; text: string }[]> {
  const result = await discoverAndLoadCustomTools([], cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: {}, providers: ["xcsh-plugins"] });
  expect(result.errors).toEqual([]);
  const out = [];
  for (const loaded of result.tools) {
    const r = (await loaded.tool.execute("id", {}, undefined, undefined as never, undefined)) as { content: { text: string }[] };
    out.push({ name: loaded.tool.name, level: loaded.source?.level, plugin: loaded.source?.plugin, text: r.content[0]!.text });
  }
  return out;
}

async function folderMarketplace(name: string, plugins: Record<string, unknown>[], files: Record<string, string | object>): Promise<string> {
  const root = path.join(w.root, `market-${name}`);
  await w.write(path.join(root, catalogPath()), catalog(name, plugins));
  for (const [rel, content] of Object.entries(files)) await w.write(path.join(root, rel), content);
  return root;
}

async function acme(text = "hello v1", version = "1.0.0"): Promise<string> {
  return folderMarketplace("acme", [{ name: "hello", source: "./plugins/hello", version }], pluginFiles("plugins/hello", "hello", ["hello_tool"], { text }));
}

describe("classify for the shared commands", () => {
  it("name@marketplace only when the marketplace is registered or the id installed; scoped and versioned specs stay npm", () => {
    const targets = { marketplaces: new Set(["acme", "latest"]), installedIds: new Set(["old@gone"]) };
    expect(isMarketplaceTarget("hello@acme", targets)).toBe(true);
    expect(isMarketplaceTarget("old@gone", targets)).toBe(true);
    expect(isMarketplaceTarget("hello@other", targets)).toBe(false);
    expect(isMarketplaceTarget("@acme/hello", targets)).toBe(false);
    expect(isMarketplaceTarget("@scope/pkg@acme", targets)).toBe(false);
    expect(isMarketplaceTarget("pkg@1.0.0", { marketplaces: new Set(["1.0.0"]), installedIds: new Set() })).toBe(false);
    expect(isMarketplaceTarget("pkg@^2", targets)).toBe(false);
    expect(isMarketplaceTarget("hello", targets)).toBe(false);
  });
});

describe("install in user and project scope", () => {
  it("installs into a content-keyed cache folder that the host's discovery loads; a repeat is a NOOP", async () => {
    await addMarketplace(ctx, await acme());
    const report = await installFromMarketplace(ctx, ["hello@acme"]);
    expect(report.items).toMatchObject([{ op: "ADD", id: "hello@acme", scope: "user", to: { version: "1.0.0" } }]);
    const registry = await readJson(userRegistry());
    const entry = registry.plugins["hello@acme"][0];
    expect(registry.version).toBe(2);
    expect(entry).toMatchObject({ scope: "user", version: "1.0.0", installedAt: expect.any(String), lastUpdated: expect.any(String) });
    expect(entry.enabled).toBeUndefined();
    expect(path.basename(entry.installPath)).toMatch(/^acme___hello___1\.0\.0-[0-9a-f]{12}$/);
    expect(await hostTools()).toEqual([{ name: "hello_tool", level: "user", plugin: "hello@acme", text: "hello v1" }]);
    const again = await installFromMarketplace(ctx, ["hello@acme"]);
    expect(again.items.map((i) => i.op)).toEqual(["NOOP"]);
    expect(await listMarketplacePlugins(ctx)).toMatchObject([{ id: "hello@acme", scope: "user", version: "1.0.0", enabled: true }]);
  });

  it("project installs shadow user installs; the cache is shared and removed only when no scope references it", async () => {
    const root = await acme("from user");
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["hello@acme"]);
    const userDir = (await readJson(userRegistry())).plugins["hello@acme"][0].installPath;
    await w.write(path.join(root, "plugins/hello/tools/hello_tool.mjs"), toolModule("hello_tool", "from project"));
    await installFromMarketplace(ctx, ["hello@acme"], { scope: "project" });
    const projectDir = (await readJson(projectRegistry())).plugins["hello@acme"][0].installPath;
    expect(projectDir).not.toBe(userDir); // same version 1.0.0, different content: another folder
    expect(path.basename(projectDir)).toMatch(/^acme___hello___1\.0\.0-/);
    expect(await hostTools()).toEqual([{ name: "hello_tool", level: "project", plugin: "hello@acme", text: "from project" }]);
    const elsewhere = path.join(w.root, "elsewhere");
    await mkdir(elsewhere);
    expect((await hostTools(elsewhere)).map((t) => t.text)).toEqual(["from user"]);
    expect((await listMarketplacePlugins(ctx)).map((r) => [r.scope, r.shadowedBy ?? null])).toEqual([["project", null], ["user", "project"]]);
    await expect(uninstallMarketplacePlugin(ctx, ["hello@acme"])).rejects.toMatchObject({ code: "EAMBIGUOUS_SCOPE" });

    // Same content in both scopes shares one folder.
    await installFromMarketplace(ctx, ["hello@acme"], { scope: "user" });
    expect((await readJson(userRegistry())).plugins["hello@acme"][0].installPath).toBe(projectDir);
    expect(await stat(userDir).catch(() => undefined)).toBeUndefined(); // the old user folder was released and unreferenced
    const kept = await uninstallMarketplacePlugin(ctx, ["hello@acme"], { scope: "user" });
    expect(kept.cacheRemoved).toEqual([]);
    expect((await stat(projectDir)).isDirectory()).toBe(true);
    const gone = await uninstallMarketplacePlugin(ctx, ["hello@acme"], { scope: "project" });
    expect(gone.cacheRemoved).toEqual([projectDir]);
    expect(await cacheDirs()).toEqual([]);
    expect(await readJson(projectRegistry())).toEqual({ version: 2, plugins: {} });
    await expect(uninstallMarketplacePlugin(ctx, ["hello@acme"])).rejects.toMatchObject({ code: "ENOT_INSTALLED" });
  });

  it("keeps a cache folder another project still uses", async () => {
    await addMarketplace(ctx, await acme());
    const projectB = path.join(w.root, "project-b");
    await mkdir(projectB);
    await writeTrustRecord(w.xcshHome, [w.cwd, projectB]); // the user's second project, trusted too
    const ctxB = { ...ctx, cwd: projectB };
    await installFromMarketplace(ctxB, ["hello@acme"], { scope: "project" });
    await installFromMarketplace(ctx, ["hello@acme"], { scope: "project" });
    const dir = (await readJson(projectRegistry())).plugins["hello@acme"][0].installPath;
    expect((await readJson(projectRegistry(projectB))).plugins["hello@acme"][0].installPath).toBe(dir);
    expect(await readJson(path.join(w.xcshHome, "plugins/.xcsh-tools/marketplace-projects.json"))).toEqual({ version: 1, registries: [projectRegistry(projectB), projectRegistry()] });
    const report = await uninstallMarketplacePlugin(ctx, ["hello@acme"], { scope: "project" });
    expect(report.cacheRemoved).toEqual([]);
    expect((await stat(dir)).isDirectory()).toBe(true);
    expect((await hostTools(projectB)).map((t) => t.text)).toEqual(["hello v1"]);
  });

  it("enable/disable write enabled:false the host's way; discovery skips disabled plugins", async () => {
    await addMarketplace(ctx, await acme());
    await installFromMarketplace(ctx, ["hello@acme"]);
    await setMarketplacePluginEnabled(ctx, ["hello@acme"], false);
    expect((await readJson(userRegistry())).plugins["hello@acme"][0].enabled).toBe(false);
    expect(await hostTools()).toEqual([]);
    expect((await setMarketplacePluginEnabled(ctx, ["hello@acme"], false)).items[0]!.op).toBe("NOOP");
    // A reinstall keeps the disabled state.
    await w.write(path.join(w.root, "market-acme/plugins/hello/tools/hello_tool.mjs"), toolModule("hello_tool", "v2"));
    await updateMarketplacePlugins(ctx, ["hello@acme"]);
    expect((await readJson(userRegistry())).plugins["hello@acme"][0].enabled).toBe(false);
    await setMarketplacePluginEnabled(ctx, ["hello@acme"], true);
    expect("enabled" in (await readJson(userRegistry())).plugins["hello@acme"][0]).toBe(false);
    expect((await hostTools()).map((t) => t.text)).toEqual(["v2"]);
  });

  it("refuses a plugin that does not load, an unknown plugin, an unknown marketplace; nothing is written", async () => {
    const root = await folderMarketplace("bad", [{ name: "broken", source: "./broken" }, { name: "fine", source: "./fine" }], {
      "broken/tools/broken.mjs": "export default 42;\n",
      ...pluginFiles("fine", "fine", ["fine_tool"]),
    });
    await addMarketplace(ctx, root);
    const before = await snapshotTree(w.root);
    await expect(installFromMarketplace(ctx, ["fine@bad", "broken@bad"])).rejects.toMatchObject({ code: "EPLUGIN_INVALID", message: expect.stringMatching(/ENOT_A_FACTORY/) });
    await expect(installFromMarketplace(ctx, ["nope@bad"])).rejects.toMatchObject({ code: "EPLUGIN_NOT_FOUND" });
    await expect(installFromMarketplace(ctx, ["fine@nowhere"])).rejects.toMatchObject({ code: "EMARKETPLACE_NOT_FOUND" });
    expect(await snapshotTree(w.root)).toEqual(before);
  });

  it("refuses to install from a local marketplace whose live catalog changed since its snapshot", async () => {
    const root = await acme();
    await addMarketplace(ctx, root);
    await w.write(path.join(root, catalogPath()), catalog("acme", [{ name: "hello", source: "./plugins/hello", version: "9.0.0" }]));
    await expect(installFromMarketplace(ctx, ["hello@acme"])).rejects.toMatchObject({ code: "ECATALOG_STALE" });
    await updateMarketplaces(ctx, "acme");
    expect((await installFromMarketplace(ctx, ["hello@acme"])).items[0]).toMatchObject({ to: { version: "9.0.0" } });
  });

  it("a catalog fetched by URL cannot use relative sources", async () => {
    const http = await startHttpServer();
    try {
      http.set("/m.json", catalog("web", [{ name: "rel", source: "./rel" }]));
      await addMarketplace(ctx, `${http.url}/m.json`);
      await expect(installFromMarketplace(ctx, ["rel@web"])).rejects.toMatchObject({ code: "EURL_RELATIVE_SOURCE" });
    } finally {
      await http.close();
    }
  });

  it("--dry-run plans and writes nothing", async () => {
    await addMarketplace(ctx, await acme());
    const before = await snapshotTree(w.root);
    const report = await installFromMarketplace(ctx, ["hello@acme"], { scope: "project", dryRun: true });
    expect(report).toMatchObject({ dryRun: true, items: [{ op: "ADD", scope: "project" }] });
    expect(await snapshotTree(w.root)).toEqual(before);
  });
});

describe("git and npm plugin sources, upgrades", () => {
  it("honours a sha pin that is not the tip, records gitCommitSha, caches without .git, and upgrades when the pin moves", async () => {
    const plugin = await makeGitRemote(w.root, "pinned", pluginFiles("", "pinned", ["pinned_tool"], { text: "commit one" }), ctx.env);
    const first = await plugin.head();
    const second = await plugin.commit({ "tools/pinned_tool.mjs": toolModule("pinned_tool", "commit two") });
    await plugin.commit({ "tools/pinned_tool.mjs": toolModule("pinned_tool", "commit three (tip)") });
    const root = await folderMarketplace("pins", [{ name: "pinned", source: { source: "url", url: plugin.url, sha: first }, version: "1.0.0" }], {});
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["pinned@pins"]);
    const entry = (await readJson(userRegistry())).plugins["pinned@pins"][0];
    expect(entry.gitCommitSha).toBe(first);
    expect(await hostTools()).toMatchObject([{ text: "commit one" }]);
    expect(await readdir(entry.installPath)).not.toContain(".git");

    expect(await outdatedMarketplacePlugins(ctx)).toMatchObject([{ id: "pinned@pins", outdated: false }]);
    await w.write(path.join(root, catalogPath()), catalog("pins", [{ name: "pinned", source: { source: "url", url: plugin.url, sha: second }, version: "1.0.0" }]));
    await updateMarketplaces(ctx, "pins");
    const rows = await outdatedMarketplacePlugins(ctx);
    expect(rows).toMatchObject([{ id: "pinned@pins", outdated: true, reason: expect.stringMatching(/commit/), latest: { gitCommitSha: second } }]);
    const update = await updateMarketplacePlugins(ctx, undefined);
    expect(update.items).toMatchObject([{ op: "CHANGE", id: "pinned@pins", from: { gitCommitSha: first }, to: { gitCommitSha: second, version: "1.0.0" } }]);
    expect(update.cacheRemoved).toEqual([entry.installPath]);
    const next = (await readJson(userRegistry())).plugins["pinned@pins"][0];
    expect(next.installPath).not.toBe(entry.installPath);
    expect(next.gitCommitSha).toBe(second);
    expect(await hostTools()).toMatchObject([{ text: "commit two" }]);
    expect(await cacheDirs()).toEqual([path.basename(next.installPath)]);
    expect((await updateMarketplacePlugins(ctx, undefined)).items.map((i) => i.op)).toEqual(["NOOP"]);
  });

  it("upgrades a relative plugin of a git marketplace (Claude format) when the catalog version changes", async () => {
    const files = { [catalogPath("claude")]: catalog("gm", [{ name: "hello", source: "./plugins/hello", version: "1.0.0" }]), ...pluginFiles("plugins/hello", "hello", ["hello_tool"], { flavour: "claude", text: "v1" }) };
    const remote = await makeGitRemote(w.root, "gm", files, ctx.env);
    await addMarketplace(ctx, remote.url);
    await installFromMarketplace(ctx, ["hello@gm"], { scope: "project" });
    expect(await hostTools()).toMatchObject([{ level: "project", text: "v1" }]);
    await remote.commit({ [catalogPath("claude")]: catalog("gm", [{ name: "hello", source: "./plugins/hello", version: "1.1.0" }]), "plugins/hello/tools/hello_tool.mjs": toolModule("hello_tool", "v1.1") });
    expect(await outdatedMarketplacePlugins(ctx)).toMatchObject([{ outdated: false }]); // catalogs are cached until `marketplace update`
    await updateMarketplaces(ctx, "gm");
    expect(await outdatedMarketplacePlugins(ctx)).toMatchObject([{ id: "hello@gm", scope: "project", outdated: true, reason: expect.stringMatching(/version 1\.0\.0 → 1\.1\.0/) }]);
    const report = await updateMarketplacePlugins(ctx, ["hello@gm"], { scope: "project" });
    expect(report.items).toMatchObject([{ op: "CHANGE", to: { version: "1.1.0" } }]);
    expect(await hostTools()).toMatchObject([{ text: "v1.1" }]);
    expect((await cacheDirs()).length).toBe(1);
  });

  it("installs one folder of a repository (git-subdir)", async () => {
    const repo = await makeGitRemote(w.root, "mono", { ...pluginFiles("packages/a", "a", ["a_tool"]), ...pluginFiles("packages/b", "b", ["b_tool"]) }, ctx.env);
    const root = await folderMarketplace("mono", [{ name: "b", source: { source: "git-subdir", url: repo.url, path: "packages/b" } }], {});
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["b@mono"]);
    const entry = (await readJson(userRegistry())).plugins["b@mono"][0];
    expect(entry.gitCommitSha).toBe(await repo.head());
    expect((await readdir(path.join(entry.installPath, "tools"))).sort()).toEqual(["b_tool.mjs"]);
    expect((await hostTools()).map((t) => t.name)).toEqual(["b_tool"]);
    await w.write(path.join(root, catalogPath()), catalog("mono", [{ name: "b", source: { source: "git-subdir", url: repo.url, path: "packages/zzz" } }]));
    await updateMarketplaces(ctx, "mono");
    const failed = await updateMarketplacePlugins(ctx, undefined);
    expect(failed.failed).toMatchObject([{ id: "b@mono", error: { code: "ESOURCE_NOT_FOUND" } }]);
  });

  it("installs an npm source through pacote from the test registry, and upgrades within its range", async () => {
    const name = `@${prefix}/npm-plugin`;
    const pkg = (text: string, version: string) => ({ name, version, packageJson: { type: "module" }, files: { "tools/npm_tool.mjs": toolModule("npm_tool", text), ".xcsh-plugin/plugin.json": { name: "npm-plugin" } } });
    await reg.publish(pkg("npm one", "1.0.0"));
    const root = await folderMarketplace("npmm", [{ name: "npm-plugin", source: { source: "npm", package: name, version: "^1.0.0" } }], {});
    await addMarketplace(ctx, root);
    const report = await installFromMarketplace(ctx, ["npm-plugin@npmm"]);
    expect(report.items).toMatchObject([{ op: "ADD", to: { version: "1.0.0" } }]);
    expect(await hostTools()).toMatchObject([{ name: "npm_tool", text: "npm one" }]);
    await reg.publish(pkg("npm one point one", "1.1.0"));
    await reg.publish(pkg("npm two", "2.0.0"));
    expect(await outdatedMarketplacePlugins(ctx)).toMatchObject([{ outdated: true, latest: { version: "1.1.0" } }]);
    await updateMarketplacePlugins(ctx, undefined);
    expect((await readJson(userRegistry())).plugins["npm-plugin@npmm"][0].version).toBe("1.1.0");
    expect(await hostTools()).toMatchObject([{ text: "npm one point one" }]);
  });

  it("a missing npm package is ESOURCE_NOT_FOUND", async () => {
    const root = await folderMarketplace("npmx", [{ name: "ghost", source: { source: "npm", package: `@${prefix}/does-not-exist` } }], {});
    await addMarketplace(ctx, root);
    await expect(installFromMarketplace(ctx, ["ghost@npmx"])).rejects.toMatchObject({ code: "ESOURCE_NOT_FOUND" });
  });
});
