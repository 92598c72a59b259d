/**
 * Pure parts of the plugin engine: install specs (npm's grammar after the host's feature
 * brackets), the npmrc reader (precedence, ${ENV}, scoped registries, legacy auth), and the
 * planner's feature rules.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isXcshToolsError } from "../../src/core/errors.js";
import { loadRegistryOptions, parseNpmrc, secretsOf } from "../../src/plugins/npmrc.js";
import { nextFeatures } from "../../src/plugins/plan.js";
import { parseInstallSpec, parsePackageName, splitFeatures } from "../../src/plugins/spec.js";

describe("splitFeatures (the host's last-[ rule)", () => {
  it.each([
    ["pkg", "pkg", null],
    ["pkg[a,b]", "pkg", ["a", "b"]],
    ["pkg[*]", "pkg", "*"],
    ["pkg[]", "pkg", []],
    ["pkg[ a , ,b ]", "pkg", ["a", "b"]],
    ["@scope/pkg@1.2.3[feat]", "@scope/pkg@1.2.3", ["feat"]],
    ["pkg]x[", "pkg]x[", null],
  ])("%s", (raw, npmSpec, features) => {
    expect(splitFeatures(raw)).toEqual({ npmSpec, features });
  });
});

describe("parseInstallSpec", () => {
  it.each([
    ["@acme/x", "registry", "@acme/x"],
    ["x@1.2.3", "registry", "x"],
    ["x@^1 <1.5", "registry", "x"],
    ["x@next", "registry", "x"],
    ["./plugin", "directory", undefined],
    ["/tmp/x.tgz", "tarball", undefined],
    ["https://example.com/x.tgz", "remote", undefined],
    ["git+file:///tmp/repo.git", "git", undefined],
    ["github:acme/x", "git", undefined],
  ])("%s is %s", (raw, source, name) => {
    const spec = parseInstallSpec(raw, "/cwd");
    expect(spec.source).toBe(source);
    expect(spec.name).toBe(name);
  });

  it.each(["", "x;rm -rf ~", "$(id)", "x@npm:y", "ftp://h/x.tgz", "x[a]junk", "x[a b]", "x\u0000y"])("refuses %j with ESPEC, exit 2", (raw) => {
    try {
      parseInstallSpec(raw, "/cwd");
      expect.unreachable();
    } catch (error) {
      expect(isXcshToolsError(error, "ESPEC")).toBe(true);
      expect((error as { exitCode: number }).exitCode).toBe(2);
    }
  });

  it("package names only for uninstall & co", () => {
    expect(parsePackageName("@a/b")).toBe("@a/b");
    expect(() => parsePackageName("a@1")).toThrow(/not a package name/);
    expect(() => parsePackageName("./x")).toThrow(/not a package name/);
  });
});

describe("npmrc", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "xcsh-npmrc-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("parses ini lines, quotes, comments, lists and ${ENV}", () => {
    const config = parseNpmrc(['; comment', "# comment", 'registry = "https://r.example/"', "//r.example/:_authToken=${TOK}", "strict-ssl=false", "ca[]=a", "ca[]=b", "literal=\\${NOPE}"].join("\n"), "f", { TOK: "t0ken" });
    expect(config).toEqual({ registry: "https://r.example/", "//r.example/:_authToken": "t0ken", "strict-ssl": false, ca: ["a", "b"], literal: "${NOPE}" });
    expect(() => parseNpmrc("x=${MISSING}", "f", {})).toThrow(/MISSING/);
  });

  it("reads as npm's own parser does: a section is refused by name, an unset variable names the key", () => {
    expect(() => parseNpmrc("registry=https://r.example/\n[auth]\ntoken=x\n", "/h/.npmrc", {})).toThrow(/\/h\/\.npmrc: \[auth\]: ini sections are not supported/);
    expect(() => parseNpmrc("//r.example/:_authToken=${NOPE}", "/h/.npmrc", {})).toThrow(/cannot expand \/\/r\.example\/:_authToken: \$\{NOPE\} is not set/);
    // Quoted values keep what npm keeps; `;` and `#` start a comment in an unquoted value, as in npm.
    expect(parseNpmrc("a = \"x ; y\"\nb = x;y\n", "f", {})).toEqual({ a: "x ; y", b: "x" });
  });

  it("precedence: flag > settings > env > plugins .npmrc > user .npmrc; scoped registries and legacy auth", async () => {
    const home = path.join(dir, "home");
    const plugins = path.join(dir, "plugins");
    await writeFile(path.join(dir, "user.npmrc"), "registry=https://user.example/\n_authToken=legacy-secret\n@acme:registry=https://acme.example/\n//acme.example/:_authToken=acme-secret\nalways-auth=true\n");
    await (await import("node:fs/promises")).mkdir(plugins, { recursive: true });
    await writeFile(path.join(plugins, ".npmrc"), "registry=https://project.example/\n");
    const env = { npm_config_userconfig: path.join(dir, "user.npmrc") };
    const base = { home, env, pluginsDir: plugins };
    expect((await loadRegistryOptions(base)).options.registry).toBe("https://project.example/");
    expect((await loadRegistryOptions({ ...base, env: { ...env, npm_config_registry: "https://env.example" } })).options.registry).toBe("https://env.example/");
    expect((await loadRegistryOptions({ ...base, settingsRegistry: "https://settings.example/" })).options.registry).toBe("https://settings.example/");
    const { options } = await loadRegistryOptions({ ...base, settingsRegistry: "https://settings.example/", flagRegistry: "http://127.0.0.1:1234" });
    expect(options.registry).toBe("http://127.0.0.1:1234/");
    expect(options["@acme:registry"]).toBe("https://acme.example/");
    expect(options["//acme.example/:_authToken"]).toBe("acme-secret");
    expect(options["//user.example/:_authToken"]).toBe("legacy-secret");
    expect(secretsOf(options).sort()).toEqual(["acme-secret", "legacy-secret"]);
  });
});

describe("nextFeatures", () => {
  const manifest = { features: { web: { default: true }, cache: {} } };
  it("brackets set, no brackets keep, [*] is all, unknown is EUNKNOWN_FEATURE listing the available ones", () => {
    expect(nextFeatures("p", manifest, null, undefined)).toEqual({ features: null, dropped: [] });
    expect(nextFeatures("p", manifest, null, ["cache", "gone"])).toEqual({ features: ["cache"], dropped: ["gone"] });
    expect(nextFeatures("p", manifest, "*", null).features).toEqual(["web", "cache"]);
    expect(nextFeatures("p", manifest, [], ["web"]).features).toEqual([]);
    expect(() => nextFeatures("p", manifest, ["nope"], null)).toThrow(expect.objectContaining({ code: "EUNKNOWN_FEATURE", hint: expect.stringContaining("web, cache") }));
    expect(() => nextFeatures("p", {}, ["x"], null)).toThrow(expect.objectContaining({ code: "EUNKNOWN_FEATURE" }));
  });
});
