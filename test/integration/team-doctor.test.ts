/**
 * What `doctor` and `tools` say about a project's team set (docs/design/team-sets.md (a), (c),
 * (e)): a real restore (`xcsh-tools install --yes` from the built CLI, a directory marketplace in
 * the project, an npm plugin from the shared Verdaccio) is healthy, then each case breaks one thing
 * by hand, as a user, a teammate's branch or the host would, and checks the coded warning: its
 * code, the file and field it names, and the fix. `doctor` without `--fix` writes nothing;
 * `--fix` appends missing .gitignore lines and leaves the others as they were.
 */
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makePluginWorld, toolName, toolSource, type PluginWorld } from "./plugins-fixtures.js";
import type { DoctorCheck } from "../../src/doctor/types.js";

const MKT = "tools/marketplace";
let reg: RegistryHandle & { dispose(): Promise<void> };
const tag = Math.random().toString(36).slice(2, 8);
const NPM = `@teamdr/p-${tag}`;
let w: PluginWorld;

type Check = DoctorCheck;

const publish = (version: string) =>
  reg.publish({
    name: NPM,
    version,
    packageJson: { type: "module", xcsh: { tools: "./t.js", features: { web: { description: "web", default: true, tools: ["./web.js"] } }, settings: { apiKey: { type: "string", secret: true, env: "TEAMDR_API_KEY", description: "the service's key" }, limit: { type: "number", default: 10 } } } },
    files: { "t.js": toolSource(toolName(NPM)), "web.js": toolSource(`${toolName(NPM)}_web`) },
  });

/** The project: a directory marketplace inside it (one plugin on, one off), the npm plugin, the declaration. */
async function writeProject(root: string): Promise<void> {
  const files: Record<string, string | object> = {
    [`${MKT}/${catalogPath()}`]: catalog("in-repo", [
      { name: "hello", source: "./plugins/hello", version: "1.0.0" },
      { name: "old", source: "./plugins/old", version: "0.1.0" },
    ]),
    [`${MKT}/plugins/hello/.xcsh-plugin/plugin.json`]: { name: "hello", version: "1.0.0", description: "the hello plugin" },
    [`${MKT}/plugins/hello/skills/hi/SKILL.md`]: "---\nname: hi\ndescription: says hi\n---\nhi\n",
    [`${MKT}/plugins/old/.xcsh-plugin/plugin.json`]: { name: "old", version: "0.1.0", description: "switched off by the team" },
    "xcsh-team.json": {
      version: 1,
      marketplaces: { "in-repo": { source: { source: "directory", path: `./${MKT}` } } },
      plugins: { [NPM]: { spec: "^1.0.0", features: ["web"] }, "hello@in-repo": {}, "old@in-repo": { enabled: false } },
    },
    ".xcsh/.keep": "",
  };
  for (const [rel, content] of Object.entries(files)) await w.write(path.join(root, rel), content);
}

async function doctor(args: string[] = [], cwd = w.cwd, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; checks: Check[] }> {
  const r = await w.cli(["doctor", ...args, "--json", "--cwd", cwd], env);
  expect(r.stderr).toBe("");
  return { code: r.code, checks: r.json<{ checks: Check[] }>().checks };
}

const team = (checks: Check[]) => checks.filter((c) => c.area === "team set");
const problems = (checks: Check[]) => team(checks).filter((c) => c.status !== "ok");
const codes = (checks: Check[]) => problems(checks).map((c) => c.message.split(":")[0]);

const registryFile = () => path.join(w.cwd, ".xcsh/plugins/installed_plugins.json");
const readRegistry = async () => JSON.parse(await readFile(registryFile(), "utf8"));
const installsFile = () => path.join(w.plugins, ".xcsh-tools/installs.json");

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  await publish("1.0.0");
  await publish("1.1.0");
}, 180_000);
afterAll(async () => {
  await reg?.dispose();
});
beforeEach(async () => {
  w = await makePluginWorld(reg, "", { trustProject: true });
  await writeProject(w.cwd);
  const restored = await w.cli(["install", "--yes"]);
  expect(restored.code, restored.stderr).toBe(0);
  // The one secret of the set is set: the baseline is healthy.
  const set = await w.cli(["config", "set", NPM, "apiKey", "k-123"]);
  expect(set.code, set.stderr).toBe(0);
}, 120_000);
afterEach(async () => {
  await w.cleanup();
});

describe("doctor: a restored team set", () => {
  it("is healthy after `install`, and a plain doctor writes nothing", async () => {
    const before = await snapshotTree(w.root, { exclude: ["lock"] });
    const { checks } = await doctor();
    expect(problems(checks)).toEqual([]);
    expect(team(checks)).toEqual([expect.objectContaining({ id: "team:set", status: "ok", message: expect.stringContaining(`the set of ${w.cwd} is restored: 3 plugins`) })]);
    expect(await snapshotTree(w.root, { exclude: ["lock"] })).toEqual(before);
  });
});

describe("doctor: WTEAM_NOT_RESTORED (computed from the files)", () => {
  it("a plugin added to the declaration after the restore (a teammate's commit): names the lock entry, fix `xcsh-tools install`", async () => {
    const file = path.join(w.cwd, "xcsh-team.json");
    const doc = JSON.parse(await readFile(file, "utf8"));
    doc.plugins["old@in-repo"] = {};
    await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
    const { code, checks } = await doctor();
    expect(code).toBe(0);
    expect(codes(checks)).toEqual(["WTEAM_NOT_RESTORED"]);
    const [finding] = problems(checks);
    expect(finding!.message).toContain(`${path.join(w.cwd, "xcsh-team.lock.json")} /marketplacePlugins/old@in-repo is missing`);
    expect(finding!.hint).toBe(`Run \`xcsh-tools install\` in ${w.cwd}.`);
    const again = await w.cli(["install", "--yes"]);
    expect(again.code, again.stderr).toBe(0);
    expect(problems((await doctor()).checks)).toEqual([]);
  });

  it("the generated files removed (a fresh clone, a `git clean -fdX`): the registry and the overrides are named", async () => {
    await rm(path.join(w.cwd, ".xcsh/plugins"), { recursive: true });
    await rm(path.join(w.cwd, ".xcsh/plugin-overrides.json"));
    const { checks } = await doctor();
    expect(codes(checks)).toEqual(["WTEAM_NOT_RESTORED"]);
    expect(problems(checks)[0]!.message).toContain(`${registryFile()} is missing`);
    expect(problems(checks)[0]!.message).toContain(`${path.join(w.cwd, ".xcsh/plugin-overrides.json")} does not hold the set's npm choices`);
  });

  it("a switched-off plugin turned on in the registry by hand, and the npm plugin removed from the user's tree: each named", async () => {
    const registry = await readRegistry();
    registry.plugins["old@in-repo"][0].installPath = registry.plugins["hello@in-repo"][0].installPath;
    await writeFile(registryFile(), `${JSON.stringify(registry, null, 2)}\n`);
    const removed = await w.cli(["uninstall", NPM]);
    expect(removed.code, removed.stderr).toBe(0);
    const { checks } = await doctor();
    expect(codes(checks)).toEqual(["WTEAM_NOT_RESTORED"]);
    expect(problems(checks)[0]!.message).toContain(`${registryFile()} /plugins/old@in-repo/0 does not say what the set says (off, decided by ${path.join(w.cwd, "xcsh-team.json")})`);
    expect(problems(checks)[0]!.message).toContain(`${NPM} is not installed`);
  });

  it("the locked cache folder deleted: named", async () => {
    const installPath = (await readRegistry()).plugins["hello@in-repo"][0].installPath as string;
    await rm(installPath, { recursive: true });
    const { checks } = await doctor();
    expect(codes(checks)).toEqual(["WTEAM_NOT_RESTORED"]);
    expect(problems(checks)[0]!.message).toContain(`${installPath} (hello@in-repo) is missing`);
  });
});

describe("doctor: the other team warnings", () => {
  it("WTEAM_HOST_DRIFT: the host rewrote an entry's installPath and version (autoUpdate)", async () => {
    const registry = await readRegistry();
    const entry = registry.plugins["hello@in-repo"][0];
    const locked = entry.installPath;
    entry.installPath = path.join(w.plugins, "cache/plugins/in-repo___hello___1.1.0");
    entry.version = "1.1.0";
    // Where the host's reinstall put it (a folder of its own layout, not content-keyed).
    await mkdir(path.join(entry.installPath, ".xcsh-plugin"), { recursive: true });
    await writeFile(path.join(entry.installPath, ".xcsh-plugin/plugin.json"), JSON.stringify({ name: "hello", version: "1.1.0" }));
    await writeFile(registryFile(), `${JSON.stringify(registry, null, 2)}\n`);
    const { code, checks } = await doctor();
    expect(code).toBe(0);
    expect(codes(checks)).toEqual(["WTEAM_HOST_DRIFT"]);
    const [finding] = problems(checks);
    expect(finding!.id).toBe("team:WTEAM_HOST_DRIFT:hello@in-repo");
    expect(finding!.message).toContain(`${registryFile()} /plugins/hello@in-repo/0 points at ${entry.installPath} (version 1.1.0), the lock at ${locked} (version 1.0.0)`);
    expect(finding!.hint).toContain("xcsh-tools install");
    const repaired = await w.cli(["install", "--yes"]);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(problems((await doctor()).checks)).toEqual([]);
  });

  it("WTEAM_UNDECLARED: a registry id the set does not mention, with both fixes", async () => {
    const registry = await readRegistry();
    registry.plugins["mine@other"] = [{ scope: "project", installPath: path.join(w.plugins, "cache/plugins/other___mine___1.0.0-aaaaaaaaaaaa"), version: "1.0.0", enabled: true }];
    await writeFile(registryFile(), `${JSON.stringify(registry, null, 2)}\n`);
    const { checks } = await doctor();
    expect(codes(checks)).toEqual(["WTEAM_UNDECLARED"]);
    expect(problems(checks)[0]).toMatchObject({ id: "team:WTEAM_UNDECLARED:mine@other", message: expect.stringContaining(`${registryFile()} /plugins/mine@other lists mine@other`) });
    expect(problems(checks)[0]!.hint).toContain("xcsh-tools install mine@other --scope project");
  });

  it("WTEAM_GITIGNORE: lines missing are listed; --fix appends them and keeps the user's lines byte for byte; a second doctor is clean", async () => {
    const file = path.join(w.cwd, ".xcsh/.gitignore");
    const mine = "# ours\n/plugins/\nnotes.txt";
    await writeFile(file, mine);
    const { checks } = await doctor();
    expect(codes(checks)).toEqual(["WTEAM_GITIGNORE"]);
    expect(problems(checks)[0]!.message).toBe(`WTEAM_GITIGNORE: ${file} lacks /cache/, /marketplaces.json, /plugin-overrides.json, /team.local.json: per-machine files (absolute paths of your home, personal choices) could be committed`);
    const dry = await doctor(["--fix", "--dry-run"]);
    expect(problems(dry.checks)[0]!.hint).toBe(`would fix: append /cache/, /marketplaces.json, /plugin-overrides.json, /team.local.json to ${file}`);
    expect(await readFile(file, "utf8")).toBe(mine);
    const fixed = await doctor(["--fix"]);
    expect(fixed.code).toBe(0);
    expect(team(fixed.checks).find((c) => c.id.startsWith("team:WTEAM_GITIGNORE"))).toMatchObject({ fixed: true });
    expect(await readFile(file, "utf8")).toBe(`${mine}\n/cache/\n/marketplaces.json\n/plugin-overrides.json\n/team.local.json\n`);
    expect(problems((await doctor()).checks)).toEqual([]);
  });

  it("WTEAM_GITIGNORE: no .gitignore at all: --fix writes the whole file, readable by git (0644)", async () => {
    const file = path.join(w.cwd, ".xcsh/.gitignore");
    await rm(file);
    expect(codes((await doctor()).checks)).toEqual(["WTEAM_GITIGNORE"]);
    await doctor(["--fix"]);
    expect(await readFile(file, "utf8")).toContain("/plugins/\n/cache/\n/marketplaces.json\n/plugin-overrides.json\n/team.local.json\n");
    const { stat } = await import("node:fs/promises");
    expect((await stat(file)).mode & 0o777).toBe(0o644);
  });

  it("WTEAM_GITIGNORE: a .gitignore that links out of .xcsh/ (or dangles) is never written through by --fix", async () => {
    const file = path.join(w.cwd, ".xcsh/.gitignore");
    const outside = path.join(w.root, "outside.txt");
    await writeFile(outside, "keep me\n");
    await rm(file);
    await symlink(outside, file);
    const fixed = await doctor(["--fix"]);
    expect(team(fixed.checks).find((c) => c.id.startsWith("team:WTEAM_GITIGNORE"))).toMatchObject({ fixed: false, hint: expect.stringContaining("could not fix") });
    expect(await readFile(outside, "utf8")).toBe("keep me\n");
    await rm(outside);
    const dangling = await doctor(["--fix"]);
    expect(team(dangling.checks).find((c) => c.id.startsWith("team:WTEAM_GITIGNORE"))).toMatchObject({ fixed: false });
    expect(await readFile(outside, "utf8").catch(() => "absent")).toBe("absent");
  });

  it("WTEAM_OVERRIDES_CWD: doctor and tools run in a subfolder of the root", async () => {
    const sub = path.join(w.cwd, "src/deep");
    await mkdir(sub, { recursive: true });
    const { checks } = await doctor([], sub);
    expect(codes(checks)).toEqual(["WTEAM_OVERRIDES_CWD"]);
    expect(problems(checks)[0]!.message).toContain(`npm overrides of ${w.cwd} (${path.join(w.cwd, ".xcsh/plugin-overrides.json")}`);
    expect(problems(checks)[0]!.message).toContain(`do not apply when xcsh starts in ${sub}`);
    expect(problems(checks)[0]!.hint).toContain(`Start xcsh in ${w.cwd}`);
    const tools = await w.cli(["tools", "--json", "--cwd", sub]);
    expect(tools.code, tools.stderr).toBe(0);
    expect(tools.json<{ warnings: { code: string; file: string }[] }>().warnings).toEqual([expect.objectContaining({ code: "WTEAM_OVERRIDES_CWD", file: path.join(w.cwd, ".xcsh/plugin-overrides.json") })]);
    const human = await w.cli(["tools", "--cwd", sub]);
    expect(human.stdout).toContain("warning WTEAM_OVERRIDES_CWD");
    // At the root itself: nothing to say.
    expect((await w.cli(["tools", "--json"])).json<{ warnings?: unknown }>().warnings).toBeUndefined();
  });

  it("WTEAM_NESTED_ROOT: a nested .xcsh/ without a declaration hides the parent's set (reported without trusting the nested folder)", async () => {
    const nested = path.join(w.cwd, "packages/app");
    await mkdir(path.join(nested, ".xcsh"), { recursive: true });
    const { checks } = await doctor([], nested);
    expect(codes(checks)).toEqual(["WTEAM_NESTED_ROOT"]);
    expect(problems(checks)[0]!.message).toContain(`${path.join(nested, ".xcsh")} makes ${nested} the project root and it declares no set: the set of ${w.cwd} (${path.join(w.cwd, "xcsh-team.json")}) does not load here`);
    expect(problems(checks)[0]!.hint).toContain(`Start xcsh in ${w.cwd}`);
  });

  it("WTEAM_SECRET_MISSING: a declared plugin's secret has no value here: the `config set` line (an env fallback counts as set)", async () => {
    const unset = await w.cli(["config", "delete", NPM, "apiKey"]);
    expect(unset.code, unset.stderr).toBe(0);
    const { checks } = await doctor();
    expect(codes(checks)).toEqual(["WTEAM_SECRET_MISSING"]);
    expect(problems(checks)[0]).toMatchObject({ id: `team:WTEAM_SECRET_MISSING:${NPM}:apiKey`, hint: `xcsh-tools config set ${NPM} apiKey <value>  (or set TEAMDR_API_KEY)` });
    expect(problems(checks)[0]!.message).toContain(`xcsh-plugins.lock.json /settings/${NPM.replace("/", "~1")}/apiKey, or $TEAMDR_API_KEY`);
    expect(problems((await doctor([], w.cwd, { TEAMDR_API_KEY: "from-env" })).checks)).toEqual([]);
  });

  it("WTEAM_NPM_VERSION: another project's restore moved the npm plugin (installs.json names it); fix `xcsh-tools install`", async () => {
    // The set locked the highest match, 1.1.0; the other project locks 1.0.0 and restored after.
    expect(JSON.parse(await readFile(path.join(w.cwd, "xcsh-team.lock.json"), "utf8")).npm[NPM].version).toBe("1.1.0");
    const moved = await w.cli(["install", `${NPM}@1.0.0`]);
    expect(moved.code, moved.stderr).toBe(0);
    const other = path.join(w.root, "other-project");
    const record = JSON.parse(await readFile(installsFile(), "utf8"));
    record.plugins[NPM].team = { projects: { [other]: "1.0.0", [w.cwd]: "1.1.0" } };
    await writeFile(installsFile(), `${JSON.stringify(record, null, 2)}\n`);
    const { checks } = await doctor();
    expect(codes(checks)).toEqual(["WTEAM_NPM_VERSION"]);
    expect(problems(checks)[0]!.message).toContain(`${NPM} 1.0.0 is installed, ${path.join(w.cwd, "xcsh-team.lock.json")} /npm/${NPM.replace("/", "~1")}/version locks 1.1.0 (${other} locks it at 1.0.0)`);
    expect(problems(checks)[0]!.hint).toContain("xcsh-tools install");
  });

  it("an untrusted project with a set: said, nothing of it read", async () => {
    await rm(path.join(w.plugins, ".xcsh-tools/trusted-projects.json"));
    await writeFile(path.join(w.cwd, "xcsh-team.json"), "{ not json");
    const { checks } = await doctor();
    expect(problems(checks)).toEqual([expect.objectContaining({ id: "team:untrusted", status: "warn" })]);
  });

  it("a declaration that cannot be read: an error with its reader's code, file and fix", async () => {
    await writeFile(path.join(w.cwd, "xcsh-team.json"), '{\n<<<<<<< HEAD\n  "version": 1\n=======\n  "version": 1\n>>>>>>> b\n}\n');
    const { code, checks } = await doctor();
    expect(code).toBe(1);
    expect(problems(checks)).toEqual([expect.objectContaining({ id: "team:ETEAM_CONFLICT_MARKERS", status: "error", message: expect.stringContaining(path.join(w.cwd, "xcsh-team.json")) })]);
  });
});

describe("tools: what the host cannot express about npm plugins", () => {
  it("declaredBy: this project's root here; in another project of the same user, level user and declaredBy the set's root", async () => {
    const record = JSON.parse(await readFile(installsFile(), "utf8"));
    record.plugins[NPM].team = { projects: { [w.cwd]: "1.0.0" } };
    await writeFile(installsFile(), `${JSON.stringify(record, null, 2)}\n`);
    const here = await w.cli(["tools", "--json"]);
    expect(here.code, here.stderr).toBe(0);
    const npmTools = (r: typeof here) => r.json<{ tools: { name: string; level: string; declaredBy?: string; declaredHere?: boolean }[] }>().tools.filter((t) => t.name.startsWith(toolName(NPM)));
    expect(npmTools(here).length).toBe(2);
    for (const t of npmTools(here)) expect(t).toMatchObject({ level: "user", declaredBy: w.cwd, declaredHere: true });

    const elsewhere = path.join(w.root, "elsewhere");
    await mkdir(path.join(elsewhere, ".git"), { recursive: true });
    const there = await w.cli(["tools", "--json", "--cwd", elsewhere]);
    expect(there.code, there.stderr).toBe(0);
    for (const t of npmTools(there)) expect(t).toMatchObject({ level: "user", declaredBy: w.cwd, declaredHere: false });
    const human = await w.cli(["tools", "--cwd", elsewhere]);
    expect(human.stdout).toContain(`declared by the set of ${w.cwd}; npm plugins are per user, so it loads here too (level user)`);
  });

  it("WTEAM_NPM_VERSION: another project's restore moved a plugin this set declares; tools says it as doctor does, and not in the other project", async () => {
    const moved = await w.cli(["install", `${NPM}@1.0.0`]);
    expect(moved.code, moved.stderr).toBe(0);
    const other = path.join(w.root, "other-project");
    await mkdir(path.join(other, ".git"), { recursive: true });
    const record = JSON.parse(await readFile(installsFile(), "utf8"));
    record.plugins[NPM].team = { projects: { [other]: "1.0.0", [w.cwd]: "1.1.0" } };
    await writeFile(installsFile(), `${JSON.stringify(record, null, 2)}\n`);
    const here = await w.cli(["tools", "--json"]);
    expect(here.code, here.stderr).toBe(0);
    const warnings = here.json<{ warnings?: { code: string; message: string; hint: string }[] }>().warnings ?? [];
    expect(warnings.map((x) => x.code)).toEqual(["WTEAM_NPM_VERSION"]);
    const fromDoctor = problems((await doctor()).checks)[0]!;
    expect(`WTEAM_NPM_VERSION: ${warnings[0]!.message}`).toBe(fromDoctor.message);
    expect(warnings[0]!.hint).toBe(fromDoctor.hint);
    const human = await w.cli(["tools"]);
    expect(human.stdout).toContain(`warning WTEAM_NPM_VERSION: ${NPM} 1.0.0 is installed`);
    // In the project whose lock holds the installed version, nothing to say.
    const there = await w.cli(["tools", "--json", "--cwd", other]);
    expect(there.json<{ warnings?: unknown[] }>().warnings ?? []).toEqual([]);
  });

  it("a record without team projects, or a malformed one: no declaredBy, tools still answers", async () => {
    const record = JSON.parse(await readFile(installsFile(), "utf8"));
    record.plugins[NPM].team = { projects: ["relative/path", 42] };
    await writeFile(installsFile(), `${JSON.stringify(record, null, 2)}\n`);
    const r = await w.cli(["tools", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    for (const t of r.json<{ tools: { declaredBy?: string }[] }>().tools) expect(t.declaredBy).toBeUndefined();
  });
});
