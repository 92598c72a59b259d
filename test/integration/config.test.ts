import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/core/config.js";
import { DEFAULT_SETTINGS } from "../../src/core/settings-keys.js";
import { prepareSettingsCheck, validateSettingsLayer } from "../../src/core/settings-check.js";
import { closestKey } from "../../src/manifest/unknown-keys.js";
import { XcshToolsError } from "../../src/core/errors.js";
import { makeTmpWorld, writeTrustRecord, type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

let world: TmpWorld;
worldPerTest((made) => (world = made), "xcsh-tools-test-", { trustProject: true });

// The world's project is trusted (makeTmpWorld), as the CLI would decide it.
const load = (extra: Partial<Parameters<typeof loadSettings>[0]> = {}) =>
  loadSettings({ cwd: world.cwd, xcshHome: world.xcshHome, home: world.home, env: {}, stopDir: world.root, projectTrusted: true, ...extra });

async function configError(promise: Promise<unknown>): Promise<XcshToolsError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(XcshToolsError);
  return error as XcshToolsError;
}

describe("loadSettings", () => {
  it("gives the defaults, each with origin default, when nothing is configured", async () => {
    const loaded = await load();
    expect(loaded.settings).toEqual(DEFAULT_SETTINGS);
    expect(loaded.values.lockWaitMs).toEqual({ value: 30_000, origin: "default" });
    expect(loaded.values.registry).toEqual({ value: undefined, origin: "default" });
    expect(loaded.files).toEqual({});
    expect(loaded.warnings).toEqual([]);
  });

  it("layers flags > env > project > user > defaults per leaf and records each origin", async () => {
    const user = await world.write(path.join(world.xcshHome, "xcsh-tools.json"), {
      registry: "http://user.example/",
      allowScripts: true,
      timeouts: { gitMs: 1, fetchMs: 2, importMs: 3 },
      builtInTools: ["read"],
    });
    // Found from a sub-folder: the search walks up from cwd (the project, trusted by the user's
    // record, covers its sub-folders). `registry` is a key no project file may set: ignored.
    const project = await world.write("project/.xcsh-toolsrc.yaml", "registry: http://project.example/\ntimeouts:\n  gitMs: 10\n  fetchMs: 20\noutput:\n  color: always\n");
    const cwd = path.join(world.cwd, "src", "deep");
    await world.write("project/src/deep/.keep", "");
    const loaded = await load({
      cwd,
      env: { XCSH_TOOLS_FETCH_TIMEOUT_MS: "200", XCSH_TOOLS_DISABLED_PROVIDERS: "claude, codex", XCSH_TOOLS_REGISTRY: "" },
      flags: { output: { json: true }, timeouts: { fetchMs: 2000 } },
    });
    expect(loaded.files).toEqual({ project, user });
    expect(loaded.values["output.json"]).toEqual({ value: true, origin: "flag", via: "output.json" });
    expect(loaded.values["timeouts.fetchMs"]).toEqual({ value: 2000, origin: "flag", via: "timeouts.fetchMs" });
    expect(loaded.values.disabledProviders).toEqual({ value: ["claude", "codex"], origin: "env", via: "XCSH_TOOLS_DISABLED_PROVIDERS" });
    expect(loaded.values.registry).toEqual({ value: "http://user.example/", origin: `user:${user}` });
    expect(loaded.warnings).toEqual([expect.objectContaining({ code: "ECONFIG_PROJECT_SECRET", source: project, path: "registry" })]);
    expect(loaded.values["timeouts.gitMs"]).toEqual({ value: 10, origin: `project:${project}` });
    expect(loaded.values["output.color"]).toEqual({ value: "always", origin: `project:${project}` });
    expect(loaded.values["timeouts.importMs"]).toEqual({ value: 3, origin: `user:${user}` });
    expect(loaded.values.allowScripts).toEqual({ value: true, origin: `user:${user}` });
    expect(loaded.values["timeouts.factoryMs"]).toEqual({ value: 5000, origin: "default" });
    expect(loaded.settings).toEqual({
      registry: "http://user.example/",
      allowScripts: true,
      builtInTools: ["read"],
      timeouts: { factoryMs: 5000, importMs: 3, gitMs: 10, fetchMs: 2000 },
      lockWaitMs: 30_000,
      disabledProviders: ["claude", "codex"],
      output: { color: "always", json: true },
      limits: { tarballUnpackedBytes: 512 * 1024 * 1024, tarballEntries: 100_000, tarballPathLength: 1024 },
      contextWarnTokens: 20_000,
    });
  });

  it("reads the tarball limits from the environment as numbers and refuses a limit below 1", async () => {
    const loaded = await load({ cwd: world.cwd, env: { XCSH_TOOLS_TARBALL_ENTRIES: "30", XCSH_TOOLS_TARBALL_UNPACKED_BYTES: "1024" } });
    expect(loaded.values["limits.tarballEntries"]).toEqual({ value: 30, origin: "env", via: "XCSH_TOOLS_TARBALL_ENTRIES" });
    expect(loaded.settings.limits).toEqual({ tarballUnpackedBytes: 1024, tarballEntries: 30, tarballPathLength: 1024 });
    await expect(load({ cwd: world.cwd, env: { XCSH_TOOLS_TARBALL_PATH_LENGTH: "0" } })).rejects.toMatchObject({ code: "ECONFIG" });
  });

  it.each([
    ["package.json", { name: "p", "xcsh-tools": { lockWaitMs: 7 } }],
    [".xcsh-toolsrc", '{"lockWaitMs": 7}'],
    [".xcsh-toolsrc", "lockWaitMs: 7\n"],
    [".xcsh-toolsrc.json", { lockWaitMs: 7 }],
    [".xcsh-toolsrc.yml", "lockWaitMs: 7\n"],
    ["xcsh-tools.config.json", { lockWaitMs: 7 }],
    ["xcsh-tools.config.cjs", "module.exports = { lockWaitMs: 7 };\n"],
    ["xcsh-tools.config.mjs", "export default { lockWaitMs: 7 };\n"],
  ])("reads the project file %s", async (name, content) => {
    const file = await world.write(path.join("project", name), content);
    const loaded = await load();
    expect(loaded.values.lockWaitMs).toEqual({ value: 7, origin: `project:${file}` });
  });

  it("skips a package.json without our key and keeps searching upward", async () => {
    // The folder above the project is trusted too here: a file there applies only then.
    await writeTrustRecord(world.xcshHome, [world.cwd, world.root]);
    await world.write("project/package.json", { name: "p" });
    const rc = await world.write(".xcsh-toolsrc.json", { lockWaitMs: 9 });
    expect((await load()).values.lockWaitMs).toEqual({ value: 9, origin: `project:${rc}` });
  });

  it("stops the search at stopDir", async () => {
    await world.write(".xcsh-toolsrc.json", { lockWaitMs: 9 });
    expect((await load({ stopDir: world.cwd })).values.lockWaitMs.origin).toBe("default");
  });

  it("warns about a shadowed second file in the same folder", async () => {
    await world.write("project/.xcsh-toolsrc.json", { lockWaitMs: 1 });
    const other = await world.write("project/xcsh-tools.config.json", { lockWaitMs: 2 });
    const loaded = await load();
    expect(loaded.values.lockWaitMs.value).toBe(1);
    expect(loaded.warnings).toEqual([expect.objectContaining({ code: "ECONFIG_SHADOWED", source: other })]);
  });

  it("a wrong type is ECONFIG naming the file and the field", async () => {
    const file = await world.write("project/.xcsh-toolsrc.json", { timeouts: { gitMs: "soon" } });
    const error = await configError(load());
    expect(error.code).toBe("ECONFIG");
    expect(error.file).toBe(file);
    expect(error.path).toBe("timeouts.gitMs");
    expect(error.message).toContain(file);
    expect(error.message).toContain("timeouts.gitMs");
    expect(error.exitCode).toBe(2);
  });

  it("a bad provider id, a bad URL and a non-object are ECONFIG too", async () => {
    const user = await world.write(path.join(world.xcshHome, "xcsh-tools.json"), { disabledProviders: ["natve"] });
    expect(await configError(load())).toMatchObject({ code: "ECONFIG", file: user, path: "disabledProviders.0" });
    await world.write(path.join(world.xcshHome, "xcsh-tools.json"), { registry: "ftp://x" });
    expect(await configError(load())).toMatchObject({ code: "ECONFIG", file: user, path: "registry" });
    await world.write(path.join(world.xcshHome, "xcsh-tools.json"), "[1, 2]");
    expect(await configError(load())).toMatchObject({ code: "ECONFIG", file: user });
  });

  it("a syntax error is ECONFIG naming the file", async () => {
    const file = await world.write("project/.xcsh-toolsrc.json", '{"lockWaitMs": 1,,}');
    const error = await configError(load());
    expect(error).toMatchObject({ code: "ECONFIG", file });
    expect(error.message).toContain(file);
    // An empty file holds no settings: the search goes on to the next candidate.
    await world.write("project/.xcsh-toolsrc.json", "");
    await world.write("project/.xcsh-toolsrc.yaml", "a: [unclosed\n");
    expect(await configError(load())).toMatchObject({ code: "ECONFIG", file: path.join(world.cwd, ".xcsh-toolsrc.yaml") });
  });

  it("an invalid environment value is ECONFIG naming the variable", async () => {
    const error = await configError(load({ env: { XCSH_TOOLS_LOCK_WAIT_MS: "ten" } }));
    expect(error.code).toBe("ECONFIG");
    expect(error.message).toContain("XCSH_TOOLS_LOCK_WAIT_MS");
    expect((await configError(load({ env: { XCSH_TOOLS_ALLOW_SCRIPTS: "maybe" } }))).message).toContain("XCSH_TOOLS_ALLOW_SCRIPTS");
  });

  it("reads booleans from the environment and maps NO_COLOR", async () => {
    const loaded = await load({ env: { XCSH_TOOLS_ALLOW_SCRIPTS: "yes", XCSH_TOOLS_JSON: "0", NO_COLOR: "1" } });
    expect(loaded.values.allowScripts).toEqual({ value: true, origin: "env", via: "XCSH_TOOLS_ALLOW_SCRIPTS" });
    expect(loaded.values["output.json"]).toEqual({ value: false, origin: "env", via: "XCSH_TOOLS_JSON" });
    expect(loaded.values["output.color"]).toEqual({ value: "never", origin: "env", via: "NO_COLOR" });
    const explicit = await load({ env: { XCSH_TOOLS_COLOR: "always", NO_COLOR: "1" } });
    expect(explicit.values["output.color"]).toEqual({ value: "always", origin: "env", via: "XCSH_TOOLS_COLOR" });
  });

  it("an unknown key is a warning with a did-you-mean, and does not fail", async () => {
    const file = await world.write("project/.xcsh-toolsrc.json", { lockWaitMS: 5, timeouts: { gitMS: 1 }, somethingElse: 1 });
    const loaded = await load();
    expect(loaded.values.lockWaitMs.origin).toBe("default");
    expect(loaded.warnings.map((w) => [w.code, w.source, w.path])).toEqual([
      ["ECONFIG_UNKNOWN_KEY", file, "lockWaitMS"],
      ["ECONFIG_UNKNOWN_KEY", file, "timeouts.gitMS"],
      ["ECONFIG_UNKNOWN_KEY", file, "somethingElse"],
    ]);
    expect(loaded.warnings[0]!.message).toContain('did you mean "lockWaitMs"?');
    expect(loaded.warnings[1]!.message).toContain('did you mean "timeouts.gitMs"?');
    expect(loaded.warnings[2]!.message).not.toContain("did you mean");
  });
});

describe("validateSettingsLayer and closestKey", () => {
  beforeAll(prepareSettingsCheck);
  it.each([
    ["allowScript", "allowScripts"],
    ["builtinTools", "builtInTools"],
    ["registy", "registry"],
    ["zzz", undefined],
  ])("suggests %s → %s", (typo, expected) => {
    expect(closestKey(typo, ["registry", "allowScripts", "builtInTools", "lockWaitMs"])).toBe(expected);
  });

  it("names flags as fields of the command line", () => {
    expect(() =>
      validateSettingsLayer({ lockWaitMs: -1 }, { label: "the command line", id: "flags", field: (f) => `--${f}` }),
    ).toThrow(/the command line: "--lockWaitMs" is invalid/);
  });
});
