/**
 * A state file (or a folder on its way) replaced by a symbolic link never makes a command write
 * outside the place the file belongs to: the project's `.xcsh/` for project state, the xcsh root
 * for user state (docs/security.md, "Links at a state file's place"). Each hostile case links one
 * state file kind to a "victim" outside (standing for `~/.bashrc`; it holds a valid document of
 * the kind, so the command reads it and gets as far as writing), runs the command that writes
 * that file, and checks: `EPATH_OUTSIDE` naming the file, the link's target and the fix, and the
 * whole temp tree (victim included) byte-identical. The allowed counterparts show a link that stays
 * inside the place is written through, and a whole xcsh root kept in a dotfiles folder works.
 */
import { mkdir, readFile, readlink, rename, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { describeRun, hostileCli as cli, hostileWorldsPerTest, type HostileWorld } from "./hostile-world.js";

vi.setConfig({ testTimeout: 120_000 });

const hostileWorld = hostileWorldsPerTest();

async function ok(w: HostileWorld, args: string[], cwd = w.cwd): Promise<void> {
  const r = await cli(w, args, cwd);
  expect(r.code, `${args.join(" ")}\n${describeRun(r)}`).toBe(0);
}

/** An npm plugin installed by hand (no registry needed) with one setting, `limit`. */
async function installPluginByHand(w: HostileWorld): Promise<void> {
  const plugins = path.join(w.xcshHome, "plugins");
  await w.write(path.join(plugins, "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "some-plugin": "1.0.0" } });
  await w.write(path.join(plugins, "node_modules", "some-plugin", "package.json"), {
    name: "some-plugin",
    version: "1.0.0",
    type: "module",
    xcsh: { tools: ["./base.js"], settings: { limit: { type: "number", description: "how many" } } },
  });
  await w.write(
    path.join(plugins, "node_modules", "some-plugin", "base.js"),
    `export default (api) => ({ name: "sp_base", label: "base", description: "fixture", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`,
  );
}

/** A local folder marketplace offering `hello`. */
async function folderMarketplace(w: HostileWorld, name: string): Promise<string> {
  return writeFolderMarketplace(path.join(w.root, `market-${name}`), { name, tools: ["hello_tool"], entry: { version: "1.0.0", description: "Says hello" } });
}

/** A trusted project (trusted with the CLI, as a user does), a hand-installed plugin and two marketplaces. */
async function world(): Promise<{ w: HostileWorld; acme: string; other: string }> {
  const w = await hostileWorld();
  await installPluginByHand(w);
  await ok(w, ["trust"]);
  return { w, acme: await folderMarketplace(w, "acme"), other: await folderMarketplace(w, "other") };
}

/**
 * Move the state file (or folder) `target` to the victim folder and leave a link to it in its
 * place, as someone who can write the folder would: the victim keeps a valid document, so the
 * command reads it and goes on to write. Returns the victim path.
 */
async function linkOut(w: HostileWorld, target: string, content?: object): Promise<string> {
  // Beside the world's victim folder (which must stay as set up): the moved file is the victim here.
  const victim = path.join(w.root, "outside", `linked-${path.basename(target)}`);
  await mkdir(path.dirname(victim), { recursive: true });
  if (content !== undefined) await w.write(target, content);
  await rename(target, victim);
  await symlink(victim, target);
  return victim;
}

/** The command failed with EPATH_OUTSIDE naming `file` and `victim`, and nothing in the world changed. */
async function expectRefused(w: HostileWorld, args: string[], file: string, victim: string): Promise<void> {
  const before = await snapshotTree(w.root);
  const r = await cli(w, [...args, "--json"]);
  expect(r.code, describeRun(r)).toBe(1);
  const error = r.json().error;
  expect(error, describeRun(r)).toMatchObject({ code: "EPATH_OUTSIDE", message: expect.stringContaining(file), hint: expect.stringContaining("Remove the link") });
  expect(error.message).toContain(victim);
  expect(await snapshotTree(w.root), "something changed").toEqual(before);
  await w.assertUntouched();
}

const overridesDoc = { settings: { "some-plugin": { limit: 1 } } };

describe("project state linked out of the project's .xcsh is never written through: EPATH_OUTSIDE, nothing changed", () => {
  it.each([
    ["disable --scope project", ["disable", "some-plugin", "--scope", "project"]],
    ["config set --scope project", ["config", "set", "some-plugin", "limit", "5", "--scope", "project"]],
  ])(".xcsh/plugin-overrides.json -> victim: %s", async (_label, args) => {
    const { w } = await world();
    const file = path.join(w.cwd, ".xcsh", "plugin-overrides.json");
    const victim = await linkOut(w, file, overridesDoc);
    await expectRefused(w, args, file, victim);
  });

  it(".xcsh/marketplaces.json -> victim: marketplace add --scope project", async () => {
    const { w, acme, other } = await world();
    await ok(w, ["marketplace", "add", other, "--scope", "project"]);
    const file = path.join(w.cwd, ".xcsh", "marketplaces.json");
    const victim = await linkOut(w, file);
    await expectRefused(w, ["marketplace", "add", acme, "--scope", "project"], file, victim);
  });

  it(".xcsh/plugins/installed_plugins.json -> victim: install name@mkt --scope project", async () => {
    const { w, acme } = await world();
    await ok(w, ["marketplace", "add", acme, "--scope", "project"]);
    const file = path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json");
    const victim = await linkOut(w, file, { version: 2, plugins: {} });
    await expectRefused(w, ["install", "hello@acme", "--scope", "project"], file, victim);
  });

  it(".xcsh/plugins (the folder) -> a folder outside: install name@mkt --scope project writes nothing there", async () => {
    const { w, acme } = await world();
    await ok(w, ["marketplace", "add", acme, "--scope", "project"]);
    const folder = path.join(w.cwd, ".xcsh", "plugins");
    await w.write(path.join(folder, "installed_plugins.json"), { version: 2, plugins: {} });
    const victim = await linkOut(w, folder);
    await expectRefused(w, ["install", "hello@acme", "--scope", "project"], path.join(folder, "installed_plugins.json"), victim);
  });

  it(".xcsh/plugin-overrides.json -> the user's own state (inside the xcsh root, outside the project): refused too", async () => {
    const { w } = await world();
    const file = path.join(w.cwd, ".xcsh", "plugin-overrides.json");
    const victim = await w.write(path.join(w.xcshHome, "plugin-overrides.json"), overridesDoc);
    await mkdir(path.dirname(file), { recursive: true });
    await symlink(victim, file);
    const before = await readFile(victim, "utf8");
    const r = await cli(w, ["disable", "some-plugin", "--scope", "project", "--json"]);
    expect(r.code, describeRun(r)).toBe(1);
    expect(r.json().error).toMatchObject({ code: "EPATH_OUTSIDE", message: expect.stringContaining(victim) });
    expect(await readFile(victim, "utf8")).toBe(before);
    expect(await readlink(file)).toBe(victim);
  });
});

describe("a project's state never leads into the user's state, and removals never follow a link out", () => {
  it("the project's .xcsh folder itself is a link to the user's xcsh root: marketplace add --scope project leaves the user's marketplaces.json alone", async () => {
    const { w, acme, other } = await world();
    await ok(w, ["marketplace", "add", other]);
    const userRegistry = path.join(w.xcshHome, "marketplaces.json");
    const xcshDir = path.join(w.cwd, ".xcsh");
    await symlink(w.xcshHome, xcshDir);
    await expectRefused(w, ["marketplace", "add", acme, "--scope", "project"], xcshDir, w.xcshHome);
    expect(JSON.parse(await readFile(userRegistry, "utf8")).marketplaces).toMatchObject([{ name: "other" }]);
  });

  it(".xcsh/cache/marketplaces/acme (a folder marketplace remove deletes) -> a folder outside: marketplace remove --scope project deletes nothing there", async () => {
    const { w, acme } = await world();
    await ok(w, ["marketplace", "add", acme, "--scope", "project"]);
    const folder = path.join(w.cwd, ".xcsh", "cache", "marketplaces", "acme");
    const victim = await linkOut(w, folder);
    await expectRefused(w, ["marketplace", "remove", "acme", "--scope", "project"], folder, victim);
  });
});

describe("user state linked out of the xcsh root is never written through: EPATH_OUTSIDE, nothing changed", () => {
  it("trusted-projects.json -> victim: trust", async () => {
    const { w } = await world();
    const file = path.join(w.xcshHome, "plugins", ".xcsh-tools", "trusted-projects.json");
    const victim = await linkOut(w, file);
    const elsewhere = path.join(w.root, "another-project");
    await mkdir(elsewhere);
    await expectRefused(w, ["trust", elsewhere], file, victim);
  });

  it("marketplaces.json -> victim: marketplace add", async () => {
    const { w, acme, other } = await world();
    await ok(w, ["marketplace", "add", other]);
    const file = path.join(w.xcshHome, "marketplaces.json");
    const victim = await linkOut(w, file);
    await expectRefused(w, ["marketplace", "add", acme], file, victim);
  });

  it("plugins/installed_plugins.json -> victim: install name@mkt", async () => {
    const { w, acme } = await world();
    await ok(w, ["marketplace", "add", acme]);
    const file = path.join(w.xcshHome, "plugins", "installed_plugins.json");
    const victim = await linkOut(w, file, { version: 2, plugins: {} });
    await expectRefused(w, ["install", "hello@acme"], file, victim);
  });

  it("plugins/xcsh-plugins.lock.json -> victim: enable (user scope)", async () => {
    const { w } = await world();
    await ok(w, ["disable", "some-plugin"]);
    const file = path.join(w.xcshHome, "plugins", "xcsh-plugins.lock.json");
    const victim = await linkOut(w, file);
    await expectRefused(w, ["enable", "some-plugin"], file, victim);
  });
});

describe("a link the rule allows is written through", () => {
  it("project: .xcsh/plugin-overrides.json -> a file inside the same .xcsh: disable --scope project writes the target, the link stays", async () => {
    const { w } = await world();
    const target = await w.write(path.join(w.cwd, ".xcsh", "kept", "overrides.json"), overridesDoc);
    const file = path.join(w.cwd, ".xcsh", "plugin-overrides.json");
    await symlink(target, file);
    await ok(w, ["disable", "some-plugin", "--scope", "project"]);
    expect(await readlink(file)).toBe(target);
    expect(await readFile(target, "utf8")).toContain("some-plugin");
    expect(await readFile(target, "utf8")).not.toBe(`${JSON.stringify(overridesDoc, null, 2)}\n`);
    await w.assertUntouched();
  });

  it("user: trusted-projects.json -> a file inside the xcsh root: trust writes the target, the link stays", async () => {
    const { w } = await world();
    const file = path.join(w.xcshHome, "plugins", ".xcsh-tools", "trusted-projects.json");
    const target = path.join(w.xcshHome, "kept-trust.json");
    await rename(file, target);
    await symlink(target, file);
    const elsewhere = path.join(w.root, "another-project");
    await mkdir(elsewhere);
    await ok(w, ["trust", elsewhere]);
    expect(await readlink(file)).toBe(target);
    expect(JSON.parse(await readFile(target, "utf8")).projects.map((p: { path: string }) => p.path)).toContain(elsewhere);
    await w.assertUntouched();
  });

  it("user: the whole xcsh root is a link into a dotfiles folder (GNU stow's folded link): trust and marketplace add work", async () => {
    const w = await hostileWorld();
    const dotfiles = path.join(w.home, "dotfiles", "xcsh", ".xcsh");
    await mkdir(dotfiles, { recursive: true });
    await symlink(dotfiles, w.xcshHome);
    const acme = await folderMarketplace(w, "acme");
    await ok(w, ["trust"]);
    await ok(w, ["marketplace", "add", acme]);
    expect(JSON.parse(await readFile(path.join(dotfiles, "marketplaces.json"), "utf8")).marketplaces).toMatchObject([{ name: "acme" }]);
    await w.assertUntouched();
  });
});
