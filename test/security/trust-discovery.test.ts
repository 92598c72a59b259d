/**
 * Workspace trust in discovery, the host library, the boot index and `tools`: a project the user
 * has not trusted brings no code. Its tools folders (`.xcsh/tools`, `.claude/tools`,
 * `.codex/tools`), its marketplace installs, Claude Code plugins installed for it and its
 * `plugin-overrides.json` are left out unread and reported as "not loaded: project not trusted";
 * user-level sources are unaffected. Trust follows the user's record (keyed by real path, a
 * parent covers its subfolders, a broken record trusts nothing) unless the host decides.
 *
 * Probes: every hostile module runs the canary at import, so "was it imported?" is "did the
 * canary run?"; hostile state files are not JSON, so "was it read?" is "is there an ESTATE_FILE
 * record for it?".
 */
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { discoverWithBootIndex } from "../../src/boot/index.js";
import { discoverToolPaths } from "../../src/discovery/index.js";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import type { DiscoverCustomToolsOptions } from "../../src/core/host-options.js";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { writeTrustRecord } from "../helpers/tmp-home.js";
import { installEntry, jsTool } from "../integration/discovery-fixtures.js";
import { makeHostileWorld, type HostileWorld } from "./hostile-world.js";

let w: HostileWorld;
beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  w = await makeHostileWorld();
});
afterEach(async () => {
  await w.cleanup();
});

/** A tool module that runs the canary when imported (and then offers a tool named `name`). */
function canaryTool(name: string): string {
  return `import { execFileSync } from "node:child_process";
execFileSync(${JSON.stringify(w.canary)}, ["imported", ${JSON.stringify(name)}]);
${jsTool(name)}`;
}

const opts = (extra: DiscoverCustomToolsOptions = {}): DiscoverCustomToolsOptions => ({ home: w.home, xcshHome: w.xcshHome, env: {}, ...extra });
const load = (extra: DiscoverCustomToolsOptions = {}, cwd = w.cwd) => discoverAndLoadCustomTools([], cwd, [], undefined, opts(extra));
const names = (result: { tools: { tool: { name: string } }[] }) => result.tools.map((t) => t.tool.name).sort();
const cli = (args: string[], cwd = w.cwd) => runCli(args, { cwd, home: w.home, xcshHome: w.xcshHome });

/** The hostile clone: a canary tool in each of the three project tools folders. */
async function hostileToolFolders(): Promise<string[]> {
  const dirs = [".xcsh/tools", ".claude/tools", ".codex/tools"].map((d) => path.join(w.cwd, d));
  for (const [i, dir] of dirs.entries()) await w.write(path.join(dir, `evil_${i}.js`), canaryTool(`evil_${i}`));
  return dirs;
}

/** A benign tool of the user's own, to show that user-level sources still load. */
async function userTool(): Promise<void> {
  await w.write(path.join(w.xcshHome, "agent/tools/mine.js"), jsTool("mine"));
}

/** A benign project tool, for the cases where the project IS trusted (the canary must stay quiet). */
async function benignProjectTool(name = "proj_tool"): Promise<void> {
  await w.write(path.join(w.cwd, ".xcsh/tools", `${name}.js`), jsTool(name));
}

/** An npm plugin installed for the user, with a feature `evil` whose tool runs the canary. */
async function npmPlugin(lockState: Record<string, unknown>): Promise<void> {
  const plugins = path.join(w.xcshHome, "plugins");
  await w.write(path.join(plugins, "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "p-npm": "^1.0.0" } });
  const pkg = path.join(plugins, "node_modules/p-npm");
  await w.write(path.join(pkg, "package.json"), {
    name: "p-npm",
    version: "1.0.0",
    xcsh: { tools: ["./base.js"], features: { evil: { default: false, tools: ["./evil.js"] } } },
  });
  await w.write(path.join(pkg, "base.js"), jsTool("npm_base"));
  await w.write(path.join(pkg, "evil.js"), canaryTool("npm_evil"));
  await w.write(path.join(plugins, "xcsh-plugins.lock.json"), { plugins: { "p-npm": { version: "1.0.0", enabledFeatures: null, ...lockState } }, settings: {} });
}

describe("an untrusted clone brings no code", () => {
  it("discoverAndLoadCustomTools (default option) imports nothing from .xcsh/.claude/.codex tools and reports them", async () => {
    const dirs = await hostileToolFolders();
    await userTool();
    const result = await load();
    expect(names(result)).toEqual(["mine"]);
    expect(result.errors).toEqual([]);
    expect(result.untrusted?.project).toBe(w.cwd);
    expect(result.untrusted?.trustCommand).toBe(`xcsh-tools trust ${w.cwd}`);
    expect(result.untrusted?.skipped).toEqual(
      dirs.map((dir, i) => ({ path: dir, kind: "tools-dir", source: expect.objectContaining({ provider: ["native", "claude", "codex"][i], level: "project" }) })),
    );
    // A second boot, from the index the first one wrote, answers the same.
    const again = await load();
    expect(names(again)).toEqual(["mine"]);
    expect(again.untrusted).toEqual(result.untrusted);
    await w.assertUntouched();
  });

  it("discoverToolPaths hands no project path to anyone and does not list the folders", async () => {
    await hostileToolFolders();
    // Were the folder listed, these would come back as metadata and an ignored file.
    await writeFile(path.join(w.cwd, ".xcsh/tools/notes.md"), "# notes\n");
    await writeFile(path.join(w.cwd, ".xcsh/tools/run.sh"), "#!/bin/sh\n");
    const result = await discoverToolPaths([], w.cwd, opts());
    expect(result.paths.filter((p) => p.path.startsWith(w.cwd))).toEqual([]);
    expect(result.metadata).toEqual([]);
    expect(result.ignored).toEqual([]);
    expect(result.untrusted?.skipped.map((s) => s.kind)).toEqual(["tools-dir", "tools-dir", "tools-dir"]);
    await w.assertUntouched();
  });

  it("`xcsh-tools tools --json` imports nothing (not even in the validation child) and says what was not loaded", { timeout: 60_000 }, async () => {
    const dirs = await hostileToolFolders();
    await userTool();
    const r = await cli(["tools", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.tools.map((t: { name: string }) => t.name)).toEqual(["mine"]);
    expect(doc.errors).toEqual([]);
    expect(doc.untrusted).toMatchObject({ project: w.cwd, reason: "project not trusted", trustCommand: `xcsh-tools trust ${w.cwd}` });
    expect(doc.untrusted.notLoaded.map((n: { path: string }) => n.path)).toEqual(dirs);
    await w.assertUntouched();
  });

  it("`xcsh-tools tools` says \"not loaded: project not trusted\" with the command to trust", { timeout: 60_000 }, async () => {
    await hostileToolFolders();
    const r = await cli(["tools"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Not loaded: project not trusted/);
    expect(r.stdout).toContain(path.join(w.cwd, ".claude/tools"));
    expect(r.stdout).toContain(`xcsh-tools trust ${w.cwd}`);
    await w.assertUntouched();
  });

  it("a project installed_plugins.json naming a plugin is not read: its plugin is not loaded and the user's entry of that id still is", async () => {
    const evilRoot = path.join(w.cwd, ".xcsh/plugins/cache/evil");
    await w.write(path.join(evilRoot, "tools/evil_mkt.js"), canaryTool("evil_mkt"));
    const projectRegistry = await w.write(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), {
      version: 2,
      plugins: { "shared@mkt": [installEntry(evilRoot, { scope: "project" })], "evil@mkt": [installEntry(evilRoot, { scope: "project" })] },
    });
    const userRoot = path.join(w.xcshHome, "plugins/cache/plugins/mkt___shared___1.0.0");
    await w.write(path.join(userRoot, "tools/user_mkt.js"), jsTool("user_mkt"));
    await w.write(path.join(w.xcshHome, "plugins/installed_plugins.json"), { version: 2, plugins: { "shared@mkt": [installEntry(userRoot)] } });
    const result = await load();
    expect(names(result)).toEqual(["user_mkt"]);
    expect(result.untrusted?.skipped).toEqual([{ path: projectRegistry, kind: "installed-plugins", source: expect.objectContaining({ provider: "xcsh-plugins", level: "project" }) }]);
    await w.assertUntouched();
  });

  it("plugin-overrides.json cannot switch on a feature of a user's npm plugin (its tools stay unimported)", async () => {
    await npmPlugin({ enabled: true });
    const overrides = await w.write(path.join(w.cwd, ".xcsh/plugin-overrides.json"), { features: { "p-npm": ["evil"] } });
    const result = await load();
    expect(names(result)).toEqual(["npm_base"]);
    expect(result.untrusted?.skipped).toEqual([{ path: overrides, kind: "plugin-overrides", source: expect.objectContaining({ provider: "npm", level: "project" }) }]);
    await w.assertUntouched();
  });

  it("plugin-overrides.json cannot enable a plugin the user disabled, and is not even read (a broken one is no error and fails nothing closed)", async () => {
    await npmPlugin({ enabled: false });
    await w.write(path.join(w.xcshHome, "agent/tools/mine.js"), jsTool("mine"));
    await w.write(path.join(w.cwd, ".xcsh/plugin-overrides.json"), '{"disabled": [], "features": {"p-npm": ["*"]}, "enabled": ["p-npm"]');
    const result = await load();
    expect(names(result)).toEqual(["mine"]);
    expect(result.errors).toEqual([]);
    // Broken, yet the user's enabled npm plugins still load: nothing was read, nothing failed closed.
    await w.write(path.join(w.xcshHome, "plugins/xcsh-plugins.lock.json"), { plugins: { "p-npm": { version: "1.0.0", enabledFeatures: null, enabled: true } }, settings: {} });
    const enabled = await load();
    expect(names(enabled)).toEqual(["mine", "npm_base"]);
    expect(enabled.errors).toEqual([]);
    await w.assertUntouched();
  });

  it("Claude Code plugins installed for this project are left out (reported), the user-scope install of the same id loads", async () => {
    const projectRoot = path.join(w.home, ".claude/plugins/cache/mkt/cc/2.0.0");
    const userRoot = path.join(w.home, ".claude/plugins/cache/mkt/cc/1.0.0");
    await w.write(path.join(projectRoot, "tools/cc_project.js"), canaryTool("cc_project"));
    await w.write(path.join(userRoot, "tools/cc_user.js"), jsTool("cc_user"));
    await w.write(path.join(w.home, ".claude/plugins/installed_plugins.json"), {
      version: 2,
      plugins: { "cc@mkt": [installEntry(userRoot), installEntry(projectRoot, { scope: "project", projectPath: w.cwd })] },
    });
    const result = await load();
    expect(names(result)).toEqual(["cc_user"]);
    expect(result.untrusted?.skipped).toEqual([{ path: projectRoot, kind: "claude-project-plugin", source: expect.objectContaining({ provider: "claude-plugins", level: "project", plugin: "cc@mkt" }) }]);
    await w.assertUntouched();
  });

  it("a trust record planted in the project itself, or trust of a sibling whose name merely starts the same, trusts nothing", async () => {
    await hostileToolFolders();
    await w.write(path.join(w.cwd, ".xcsh/plugins/.xcsh-tools/trusted-projects.json"), { version: 1, projects: [{ path: w.cwd }] });
    await w.write(path.join(w.cwd, ".xcsh/trusted-projects.json"), { version: 1, projects: [{ path: w.cwd }] });
    // `project-other` is trusted; `project` is not below it, and `project` is not below `proj`.
    await writeTrustRecord(w.xcshHome, [`${w.cwd}-other`, path.join(w.root, "proj"), path.join(w.cwd, "sub")]);
    const result = await load();
    expect(result.tools).toEqual([]);
    expect(result.untrusted?.skipped).toHaveLength(3);
    await w.assertUntouched();
  });
});

describe("the host decides", () => {
  it("projectTrust: false leaves out a project the user trusts", async () => {
    await writeTrustRecord(w.xcshHome, [w.cwd]);
    await hostileToolFolders();
    await userTool();
    const result = await load({ projectTrust: false });
    expect(names(result)).toEqual(["mine"]);
    expect(result.untrusted?.skipped).toHaveLength(3);
    await w.assertUntouched();
  });

  it("projectTrust: true loads an untrusted project's tools; the default answer stays untrusted", async () => {
    await benignProjectTool();
    const trusted = await load({ projectTrust: true });
    expect(names(trusted)).toEqual(["proj_tool"]);
    expect(trusted.untrusted).toBeUndefined();
    // The trusted view the host's boot left in the index is not served to the default question.
    const byDefault = await load();
    expect(names(byDefault)).toEqual([]);
    expect(byDefault.untrusted?.skipped).toHaveLength(1);
    await w.assertUntouched();
  });

  it("a callback is asked once, with the project's real path; false trusts nothing", async () => {
    await hostileToolFolders();
    const asked: string[] = [];
    const result = await load({ projectTrust: (project) => (asked.push(project.path), false) });
    expect(asked).toEqual([w.cwd]);
    expect(result.tools).toEqual([]);
    expect(result.untrusted?.skipped).toHaveLength(3);
    await w.assertUntouched();
  });

  it("a callback that throws or rejects trusts nothing, and the boot still succeeds", async () => {
    await writeTrustRecord(w.xcshHome, [w.cwd]);
    await hostileToolFolders();
    await userTool();
    for (const projectTrust of [
      () => {
        throw new Error("dialog crashed");
      },
      async () => Promise.reject(new Error("dialog closed")),
      // Anything but `true` (a truthy string, say) is no.
      () => "yes" as unknown as boolean,
    ]) {
      const result = await load({ projectTrust });
      expect(names(result)).toEqual(["mine"]);
      expect(result.untrusted?.skipped).toHaveLength(3);
    }
    await w.assertUntouched();
  });
});

describe("the user's record", () => {
  it("trust → loads; untrust → left out again, even though the index holds a fresh trusted view", { timeout: 90_000 }, async () => {
    await benignProjectTool();
    expect(names(await load())).toEqual([]);
    const trusted = await cli(["trust", "--json"]);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.json()).toMatchObject({ project: w.cwd, trusted: true, changed: true });
    expect(names(await load())).toEqual(["proj_tool"]);
    // Served from the index now.
    expect((await discoverWithBootIndex([], w.cwd, opts())).index.fresh).toBe(true);

    const untrusted = await cli(["untrust", "--json"]);
    expect(untrusted.code, untrusted.stderr).toBe(0);
    expect(untrusted.json()).toMatchObject({ project: w.cwd, trusted: false, changed: true });
    // The trusted view's own inputs did not change, yet it is not the answer any more.
    const after = await discoverWithBootIndex([], w.cwd, opts());
    expect(after.paths).toEqual([]);
    expect(after.untrusted?.skipped).toHaveLength(1);
    expect(names(await load())).toEqual([]);
    const listed = await cli(["tools", "--json"]);
    expect(listed.json().tools).toEqual([]);
    await w.assertUntouched();
  });

  it("a hand edit of the record makes the trusted view stale too", async () => {
    await writeTrustRecord(w.xcshHome, [w.cwd]);
    await benignProjectTool();
    expect(names(await load())).toEqual(["proj_tool"]);
    await writeTrustRecord(w.xcshHome, []);
    expect(names(await load())).toEqual([]);
    await w.assertUntouched();
  });

  it("a symlinked project folder is trusted by its real path, from either path", { timeout: 60_000 }, async () => {
    await benignProjectTool();
    const link = path.join(w.root, "link-to-project");
    await symlink(w.cwd, link, "dir");
    const r = await cli(["trust", link, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().project).toBe(w.cwd);
    expect(names(await load({}, link))).toEqual(["proj_tool"]);
    expect(names(await load({}, w.cwd))).toEqual(["proj_tool"]);
    // Re-pointing the link at an untrusted folder does not carry the trust along.
    const other = path.join(w.root, "other");
    await mkdir(path.join(other, ".xcsh/tools"), { recursive: true });
    await w.write(path.join(other, ".xcsh/tools/evil.js"), canaryTool("evil"));
    await rm(link);
    await symlink(other, link, "dir");
    const redirected = await load({}, link);
    expect(redirected.tools).toEqual([]);
    expect(redirected.untrusted?.project).toBe(other);
    await w.assertUntouched();
  });

  it("trusting a parent folder covers its subfolders", async () => {
    const sub = path.join(w.cwd, "packages/app");
    await w.write(path.join(sub, ".xcsh/tools/sub_tool.js"), jsTool("sub_tool"));
    await writeTrustRecord(w.xcshHome, [w.root]);
    const result = await load({}, sub);
    expect(names(result)).toEqual(["sub_tool"]);
    expect(result.untrusted).toBeUndefined();
    await w.assertUntouched();
  });

  it("a broken record trusts nothing (fail closed)", async () => {
    await hostileToolFolders();
    const file = path.join(w.xcshHome, "plugins/.xcsh-tools/trusted-projects.json");
    for (const content of [`{"version": 1, "projects": [{"path": "${w.cwd}"}`, JSON.stringify({ version: 2, projects: [{ path: w.cwd }] }), JSON.stringify({ version: 1, projects: [{ path: "project" }] })]) {
      await w.write(file, content);
      const result = await load();
      expect(result.tools).toEqual([]);
      expect(result.untrusted?.skipped).toHaveLength(3);
    }
    await w.assertUntouched();
  });
});
