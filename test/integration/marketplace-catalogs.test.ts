/**
 * Marketplaces themselves: add from a plain folder, a bare git repository over file://, and a
 * catalog on a loopback HTTP server, in xcsh and Claude Code formats; list, discover, search,
 * update (catalog changed, name drift, source gone), remove; strict registries and catalogs.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  addMarketplace,
  discoverPlugins,
  listMarketplaces,
  parseCatalogSource,
  removeMarketplace,
  searchPlugins,
  updateMarketplaces,
} from "../../src/marketplace/index.js";
import { makeGitRemote } from "../helpers/git-remote.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { catalog, catalogPath, marketplaceCtx, pluginFiles } from "../helpers/marketplace-fixtures.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";

let w: TmpWorld;
let http: TestHttpServer | undefined;
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
});
afterEach(async () => {
  await http?.close();
  http = undefined;
  await w.cleanup();
});

async function folderMarketplace(name = "acme", flavour: "xcsh" | "claude" = "xcsh"): Promise<string> {
  const root = path.join(w.root, `market-${name}`);
  await w.write(path.join(root, catalogPath(flavour)), catalog(name, [
    { name: "hello", source: "./plugins/hello", version: "1.0.0", description: "Says hello", keywords: ["greeting"], category: "fun" },
    { name: "tidy", source: "./plugins/tidy", version: "0.2.0", description: "Formats code", tags: ["format"] },
  ]));
  for (const [rel, content] of Object.entries({ ...pluginFiles("plugins/hello", "hello", ["hello_tool"], { flavour }), ...pluginFiles("plugins/tidy", "tidy", ["tidy_tool"], { flavour }) })) {
    await w.write(path.join(root, rel), content);
  }
  return root;
}

describe("classifying sources", () => {
  it("knows every kind, refuses ambiguity and nonsense, and never contacts GitHub to classify", async () => {
    const world = marketplaceCtx(w);
    expect(parseCatalogSource("https://example.com/x/marketplace.json", world)).toEqual({ kind: "url", uri: "https://example.com/x/marketplace.json" });
    expect(parseCatalogSource("https://example.com/acme/plugins.git", world).kind).toBe("git");
    expect(parseCatalogSource("git@github.com:acme/plugins.git", world).kind).toBe("git");
    expect(parseCatalogSource("ssh://git@host/acme.git", world).kind).toBe("git");
    expect(parseCatalogSource("file:///srv/acme.git#v1", world)).toEqual({ kind: "git", uri: "file:///srv/acme.git#v1" });
    expect(parseCatalogSource("acme/plugins", world)).toEqual({ kind: "github", uri: "acme/plugins" });
    expect(parseCatalogSource("github:acme/plugins#main", world)).toEqual({ kind: "github", uri: "acme/plugins#main" });
    expect(parseCatalogSource("../elsewhere", world)).toEqual({ kind: "local", uri: path.resolve(w.cwd, "../elsewhere") });
    expect(parseCatalogSource("~/m", world)).toEqual({ kind: "local", uri: path.join(w.home, "m") });
    await w.write(path.join(w.cwd, "acme/plugins/readme"), "x");
    expect(() => parseCatalogSource("acme/plugins", world)).toThrow(expect.objectContaining({ code: "ESOURCE_AMBIGUOUS" }));
    expect(parseCatalogSource("github:acme/plugins", world).kind).toBe("github");
    expect(() => parseCatalogSource("just-a-name", world)).toThrow(expect.objectContaining({ code: "ESOURCE_UNKNOWN" }));
  });
});

describe("add, list, discover, search, remove", () => {
  it("adds a plain folder (xcsh format): registry entry, cached catalog, plugins listed and searchable", async () => {
    const ctx = marketplaceCtx(w);
    const root = await folderMarketplace();
    const report = await addMarketplace(ctx, root);
    expect(report).toMatchObject({ op: "ADD", name: "acme", scope: "user", plugins: ["hello", "tidy"] });
    const registry = JSON.parse(await readFile(path.join(w.xcshHome, "marketplaces.json"), "utf8"));
    expect(registry).toMatchObject({ version: 1, marketplaces: [{ name: "acme", sourceType: "local", sourceUri: root, catalogPath: path.join(w.xcshHome, "plugins/cache/marketplaces/acme/marketplace.json") }] });
    const rows = await listMarketplaces(ctx);
    expect(rows).toMatchObject([{ name: "acme", plugins: 2, scope: "user" }]);
    expect((await discoverPlugins(ctx, "acme")).map((p) => p.id)).toEqual(["hello@acme", "tidy@acme"]);
    expect((await searchPlugins(ctx, "greeting")).map((p) => p.id)).toEqual(["hello@acme"]);
    expect((await searchPlugins(ctx, "FORMAT")).map((p) => p.id)).toEqual(["tidy@acme"]);
    expect((await searchPlugins(ctx, "fun hello")).map((p) => p.id)).toEqual(["hello@acme"]);
    expect(await searchPlugins(ctx, "nothing-like-this")).toEqual([]);
    await expect(addMarketplace(ctx, root)).rejects.toMatchObject({ code: "EMARKETPLACE_EXISTS" });
    const removed = await removeMarketplace(ctx, "acme");
    expect(removed.op).toBe("REMOVE");
    expect(JSON.parse(await readFile(path.join(w.xcshHome, "marketplaces.json"), "utf8")).marketplaces).toEqual([]);
    expect(await snapshotTree(path.join(w.xcshHome, "plugins/cache/marketplaces"))).toEqual({ ".": expect.stringMatching(/^dir/) });
    await expect(removeMarketplace(ctx, "acme")).rejects.toMatchObject({ code: "EMARKETPLACE_NOT_FOUND" });
  });

  it("adds a bare git repository over file:// in Claude Code format; the cache holds no .git", async () => {
    const ctx = marketplaceCtx(w);
    const files = { [catalogPath("claude")]: catalog("claudish", [{ name: "hello", source: "./plugins/hello" }]), ...pluginFiles("plugins/hello", "hello", ["hello_tool"], { flavour: "claude" }) };
    const remote = await makeGitRemote(w.root, "claudish", files, ctx.env);
    const report = await addMarketplace(ctx, remote.url);
    expect(report).toMatchObject({ name: "claudish", entry: { sourceType: "git", sourceUri: remote.url } });
    const cache = await snapshotTree(path.join(w.xcshHome, "plugins/cache/marketplaces/claudish"));
    expect(Object.keys(cache).sort()).toEqual([".", ".claude-plugin", ".claude-plugin/marketplace.json", "marketplace.json", "plugins", "plugins/hello", "plugins/hello/.claude-plugin", "plugins/hello/.claude-plugin/plugin.json", "plugins/hello/tools", "plugins/hello/tools/hello_tool.mjs"]);
  });

  it("adds a catalog served over loopback HTTP, with --name and --dry-run writing nothing", async () => {
    const ctx = marketplaceCtx(w);
    http = await startHttpServer();
    http.set("/cat/marketplace.json", catalog("webcat", [{ name: "remote", source: { source: "github", repo: "acme/remote" } }]));
    const before = await snapshotTree(w.root);
    const dry = await addMarketplace(ctx, `${http.url}/cat/marketplace.json`, { dryRun: true });
    expect(dry).toMatchObject({ op: "ADD", dryRun: true, name: "webcat" });
    expect(await snapshotTree(w.root)).toEqual(before);
    const added = await addMarketplace(ctx, `${http.url}/cat/marketplace.json`, { name: "web" });
    expect(added.entry).toMatchObject({ name: "web", sourceType: "url" });
    expect(JSON.parse(await readFile(added.entry.catalogPath, "utf8")).name).toBe("webcat");
    http.set("/missing.json", undefined);
    await expect(addMarketplace(ctx, `${http.url}/missing.json`)).rejects.toMatchObject({ code: "ESOURCE_NOT_FOUND" });
  });

  it("stops reading a catalog URL whose body passes the JSON size limit (EJSON_TOO_LARGE), writing nothing", async () => {
    // A server that never ends its answer and declares no length: only the byte count can stop us.
    let sent = 0;
    let closed = false;
    const endless = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(1024 * 1024, " ");
      const pump = () => {
        while (!closed && res.write(chunk)) sent += chunk.length;
        if (!closed) res.once("drain", pump);
      };
      res.on("close", () => (closed = true));
      pump();
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    try {
      const before = await snapshotTree(w.root);
      const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/cat/marketplace.json`;
      await expect(addMarketplace(marketplaceCtx(w), url)).rejects.toMatchObject({ code: "EJSON_TOO_LARGE" });
      await vi.waitFor(() => expect(closed, "the download was cancelled").toBe(true));
      expect(sent).toBeLessThan(64 * 1024 * 1024);
      expect(await snapshotTree(w.root)).toEqual(before);
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });

  it("adds in project scope: <project>/.xcsh/marketplaces.json, shadowing a user marketplace of the same name", async () => {
    const ctx = marketplaceCtx(w);
    const root = await folderMarketplace();
    await addMarketplace(ctx, root);
    const other = await folderMarketplace("other");
    await addMarketplace(ctx, other, { name: "acme", scope: "project" });
    const project = JSON.parse(await readFile(path.join(w.cwd, ".xcsh/marketplaces.json"), "utf8"));
    expect(project.marketplaces).toMatchObject([{ name: "acme", sourceUri: other }]);
    const rows = await listMarketplaces(ctx);
    expect(rows.map((r) => [r.name, r.scope, r.shadowedBy ?? null])).toEqual([["acme", "project", null], ["acme", "user", "project"]]);
    expect((await discoverPlugins(ctx)).every((p) => p.scope === "project")).toBe(true);
  });
});

describe("strictness", () => {
  it("a catalog listing one plugin twice is an error naming both entries; nothing is written", async () => {
    const ctx = marketplaceCtx(w);
    const root = path.join(w.root, "dup");
    await w.write(path.join(root, catalogPath()), catalog("dup", [{ name: "a", source: "./a" }, { name: "b", source: "./b" }, { name: "a", source: "./c" }]));
    const before = await snapshotTree(w.root);
    await expect(addMarketplace(ctx, root)).rejects.toMatchObject({ code: "EDUPLICATE_PLUGIN", message: expect.stringMatching(/\/plugins\/2\/name.*"a".*\/plugins\/0/) });
    expect(await snapshotTree(w.root)).toEqual(before);
  });

  it("a malformed marketplaces.json is EREGISTRY_FILE with a hint, and is never replaced", async () => {
    const ctx = marketplaceCtx(w);
    const root = await folderMarketplace();
    const file = await w.write(path.join(w.xcshHome, "marketplaces.json"), '{"version": 1, "marketplaces": [');
    await expect(addMarketplace(ctx, root)).rejects.toMatchObject({ code: "EREGISTRY_FILE", hint: expect.stringMatching(/never replaces/) });
    expect(await readFile(file, "utf8")).toBe('{"version": 1, "marketplaces": [');
    await writeFile(file, JSON.stringify({ version: 1, marketplaces: [{ name: "x" }] }));
    await expect(listMarketplaces(ctx)).rejects.toMatchObject({ code: "EREGISTRY_FILE", file });
  });

  it("skips a bad plugin entry with a warning and keeps the rest", async () => {
    const ctx = marketplaceCtx(w);
    const root = path.join(w.root, "partly");
    await w.write(path.join(root, catalogPath()), catalog("partly", [{ name: "good", source: "./good" }, { name: "bad", source: { source: "svn", url: "x" } }]));
    const report = await addMarketplace(ctx, root);
    expect(report.plugins).toEqual(["good"]);
    expect(report.warnings.join("\n")).toMatch(/unknown source kind.*skipped/);
  });
});

describe("update", () => {
  it("reports a changed catalog, refuses name drift, and keeps the last good catalog when the source is gone", async () => {
    const ctx = marketplaceCtx(w);
    const files = { [catalogPath()]: catalog("gitm", [{ name: "hello", source: "./plugins/hello", version: "1.0.0" }]), ...pluginFiles("plugins/hello", "hello", ["hello_tool"]) };
    const remote = await makeGitRemote(w.root, "gitm", files, ctx.env);
    await addMarketplace(ctx, remote.url);
    expect((await updateMarketplaces(ctx, "gitm")).results).toMatchObject([{ op: "NOOP", name: "gitm" }]);

    await remote.commit({ [catalogPath()]: catalog("gitm", [{ name: "hello", source: "./plugins/hello", version: "1.1.0" }, { name: "new-one", source: "./plugins/hello" }]) });
    const changed = await updateMarketplaces(ctx, "gitm");
    expect(changed.results).toMatchObject([{ op: "CHANGE", changes: { added: ["new-one"], removed: [], changed: [{ name: "hello", from: "1.0.0", to: "1.1.0" }] } }]);
    expect((await discoverPlugins(ctx, "gitm")).map((p) => `${p.name}:${p.version ?? "-"}`)).toEqual(["hello:1.1.0", "new-one:-"]);

    await remote.commit({ [catalogPath()]: catalog("renamed", [{ name: "hello", source: "./plugins/hello" }]) });
    const before = await snapshotTree(w.xcshHome);
    const drift = await updateMarketplaces(ctx, "gitm");
    expect(drift).toMatchObject({ failed: 1, results: [{ op: "FAILED", error: { code: "EMARKETPLACE_NAME_DRIFT", message: expect.stringMatching(/"renamed".*"gitm"/), hint: expect.stringMatching(/remove gitm/) } }] });
    expect(await snapshotTree(w.xcshHome)).toEqual(before);

    await rm(remote.bare, { recursive: true, force: true });
    const gone = await updateMarketplaces(ctx, undefined);
    expect(gone.results).toMatchObject([{ op: "FAILED", error: { code: "EGIT", hint: expect.stringMatching(/last good catalog is kept/) } }]);
    expect(await snapshotTree(w.xcshHome)).toEqual(before);
    expect((await discoverPlugins(ctx, "gitm")).map((p) => p.name)).toEqual(["hello", "new-one"]);
  });

  it("updates every marketplace and reports each failure instead of stopping at the first", async () => {
    const ctx = marketplaceCtx(w);
    const a = await folderMarketplace("aaa");
    const b = await folderMarketplace("bbb");
    await addMarketplace(ctx, a);
    await addMarketplace(ctx, b);
    await rm(a, { recursive: true });
    await w.write(path.join(b, catalogPath()), catalog("bbb", [{ name: "only", source: "./plugins/hello" }]));
    const report = await updateMarketplaces(ctx, undefined);
    expect(report.results.map((r) => [r.name, r.op])).toEqual([["aaa", "FAILED"], ["bbb", "CHANGE"]]);
    expect(report.results[0]).toMatchObject({ error: { code: "ESOURCE_NOT_FOUND" } });
  });
});
