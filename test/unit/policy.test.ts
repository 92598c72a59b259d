/**
 * The organization policy's file and its one judgment (src/core/policy.ts, docs/design/fleets.md
 * "Policy"): an unknown key, a bad pattern, bad JSON and an unreadable file are each a coded error
 * naming the file and the field (never a silent allow); a block rule beats the allowlist; an
 * allowlist refuses what it does not name; equivalent spellings of one source are judged alike.
 */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { withManagedPolicy } from "../helpers/no-managed-policy.js";
import { MANAGED_POLICY_SEAM, assertNotForbidden, assertNotRequired, catalogPolicySource, checkSource, loadManagedPolicy, managedPolicyFile, parseManagedPolicy, policyForChange, type PolicySource } from "../../src/core/policy.js";
import { npmPolicySource } from "../../src/core/policy-npm.js";
import { XcshToolsError } from "../../src/core/errors.js";

const FILE = "/etc/xcsh/managed-settings.json";

function refused(fn: () => unknown): XcshToolsError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(XcshToolsError);
    return error as XcshToolsError;
  }
  throw new Error("expected a coded error, got none");
}

describe("where the policy lives", () => {
  it("is fixed per platform and moved by no environment variable", async () => {
    const before = { ...process.env };
    try {
      process.env.XCSH_MANAGED_SETTINGS = "/tmp/elsewhere.json";
      process.env.XCSH_HOME = "/tmp/elsewhere";
      await withManagedPolicy(undefined, () => {
        expect(managedPolicyFile("linux")).toBe("/etc/xcsh/managed-settings.json");
        expect(managedPolicyFile("darwin")).toBe("/Library/Application Support/xcsh/managed-settings.json");
        expect(managedPolicyFile("win32")).toBe("C:\\Program Files\\xcsh\\managed-settings.json");
      });
    } finally {
      process.env = before;
    }
  });

  it("is moved by the in-process seam only", async () => {
    await withManagedPolicy("/tmp/test-policy.json", () => {
      expect((globalThis as Record<symbol, unknown>)[MANAGED_POLICY_SEAM]).toBe("/tmp/test-policy.json");
      expect(managedPolicyFile("linux")).toBe("/tmp/test-policy.json");
    });
  });
});

describe("bad policy files: coded errors naming file and field", () => {
  it.each([
    ["top-level typo", { plugin: {} }, "/plugin", "plugins"],
    ["section typo", { plugins: { alow: [] } }, "/plugins/alow", "allow"],
    ["rule typo", { marketplaces: { block: [{ githb: "acme" }] } }, "/marketplaces/block/0/githb", "github"],
    ["Claude Code's key, not ours", { strictKnownMarketplaces: [] }, "/strictKnownMarketplaces", undefined],
  ])("unknown key (%s) is EPOLICY_UNKNOWN_KEY", (_what, doc, at, meant) => {
    const error = refused(() => parseManagedPolicy(JSON.stringify(doc), FILE));
    expect(error.code).toBe("EPOLICY_UNKNOWN_KEY");
    expect(error.file).toBe(FILE);
    expect(error.path).toBe(at);
    expect(error.message).toContain(FILE);
    if (meant) expect(error.hint).toContain(`"${meant}"`);
    expect(error.exitCode).toBe(2);
  });

  it.each([
    ["github with a URL", { github: "https://github.com/acme" }, "github"],
    ["github with three parts", { github: "acme/tools/x" }, "github"],
    ["host with a scheme", { host: "https://git.corp.example" }, "host"],
    ["host with a path", { host: "git.corp.example/x" }, "host"],
    ["host in capitals", { host: "Git.Corp" }, "host"],
    ["host with a wildcard inside", { host: "git.*.example" }, "host"],
    ["scope without @", { npmScope: "acme" }, "npmScope"],
    ["registry not a URL", { npmRegistry: "npm.corp.example" }, "npmRegistry"],
    ["relative folder", { folder: "plugins" }, "folder"],
    ["folder with a wildcard", { folder: "/opt/*" }, "folder"],
  ])("bad pattern (%s) is EPOLICY_PATTERN", (_what, rule, key) => {
    const error = refused(() => parseManagedPolicy(JSON.stringify({ plugins: { allow: [{ npmScope: "@ok" }, rule] } }), FILE));
    expect(error.code).toBe("EPOLICY_PATTERN");
    expect(error.path).toBe(`/plugins/allow/1/${key}`);
    expect(error.file).toBe(FILE);
    expect(error.hint).toMatch(/Write /);
  });

  it("a rule with two keys, or none, is EPOLICY_PATTERN", () => {
    for (const rule of [{ github: "acme", host: "github.com" }, {}]) {
      const error = refused(() => parseManagedPolicy(JSON.stringify({ marketplaces: { block: [rule] } }), FILE));
      expect(error.code).toBe("EPOLICY_PATTERN");
      expect(error.path).toBe("/marketplaces/block/0");
    }
  });

  it("bad JSON and wrong types are EPOLICY_INVALID", () => {
    expect(refused(() => parseManagedPolicy("{ not json", FILE)).code).toBe("EPOLICY_INVALID");
    const typed = refused(() => parseManagedPolicy(JSON.stringify({ allowScripts: "no" }), FILE));
    expect(typed.code).toBe("EPOLICY_INVALID");
    expect(typed.path).toBe("/allowScripts");
    expect(refused(() => parseManagedPolicy(JSON.stringify({ plugins: { required: "x" } }), FILE)).path).toBe("/plugins/required");
  });
});

describe("reading the file never fails open", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "xcsh-policy-unit-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("no file: no policy", () => {
    const loaded = loadManagedPolicy(path.join(dir, "missing.json"));
    expect(loaded.state).toBe("none");
    expect(policyForChange(loaded)).toBeUndefined();
  });

  it("a file that cannot be read stops every change with EPOLICY_UNREADABLE", async () => {
    const file = path.join(dir, "managed-settings.json");
    await mkdir(file);
    const loaded = loadManagedPolicy(file);
    expect(loaded.state).toBe("broken");
    const error = refused(() => policyForChange(loaded));
    expect(error.code).toBe("EPOLICY_UNREADABLE");
    expect(error.file).toBe(file);
  });

  it("a file that does not parse stops every change with EPOLICY_INVALID", async () => {
    const file = path.join(dir, "managed-settings.json");
    await writeFile(file, "");
    expect(refused(() => policyForChange(loadManagedPolicy(file))).code).toBe("EPOLICY_INVALID");
  });
});

describe("checkSource: block first, then the allowlist", () => {
  const policy = parseManagedPolicy(
    JSON.stringify({
      marketplaces: { allow: [{ github: "acme" }, { host: "*.corp.example" }, { folder: "/opt/markets" }], block: [{ github: "acme/evil" }] },
      plugins: { allow: [{ npmScope: "@acme" }, { npmRegistry: "https://npm.corp.example/" }], block: [{ npmScope: "@bad" }], required: ["audit-log"], forbidden: ["@acme/leaky", "spy@any"] },
    }),
    FILE,
  );
  const verdict = (source: PolicySource, what: "marketplace" | "plugin" = "marketplace") => checkSource(policy, source, what);

  it("one GitHub repository is judged alike however it is spelled", () => {
    for (const source of [catalogPolicySource("github", "acme/evil"), catalogPolicySource("github", "ACME/Evil#main"), catalogPolicySource("git", "https://github.com/acme/evil.git"), catalogPolicySource("git", "git@github.com:acme/evil.git"), catalogPolicySource("git", "git+ssh://git@github.com/Acme/evil")]) {
      expect(verdict(source)).toMatchObject({ allowed: false, code: "EPOLICY_BLOCKED" });
    }
    expect(verdict(catalogPolicySource("git", "https://github.com/acme/tools.git"))).toEqual({ allowed: true });
  });

  it("an allowlist refuses what it does not name, hosts and folders included", () => {
    expect(verdict(catalogPolicySource("github", "other/tools"))).toMatchObject({ allowed: false, code: "EPOLICY_NOT_ALLOWED" });
    expect(verdict(catalogPolicySource("git", "https://git.corp.example/x.git"))).toEqual({ allowed: true });
    expect(verdict(catalogPolicySource("git", "https://corp.example/x.git"))).toEqual({ allowed: true });
    expect(verdict(catalogPolicySource("git", "https://evilcorp.example/x.git"))).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
    expect(verdict(catalogPolicySource("url", "https://git.corp.example.attacker.io/m.json"))).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
    expect(verdict(catalogPolicySource("local", "/opt/markets/one"))).toEqual({ allowed: true });
    expect(verdict(catalogPolicySource("local", "/opt/markets-evil"))).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
    expect(verdict(catalogPolicySource("git", "file:///opt/markets/../elsewhere"))).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
  });

  it("npm sources: scope, registry, and what is not a registry name", () => {
    const registryOf = (name: string | undefined) => (name?.startsWith("@acme/") ? "https://registry.npmjs.org/" : "https://npm.corp.example/");
    expect(verdict(npmPolicySource("@acme/x@^1", registryOf), "plugin")).toEqual({ allowed: true });
    expect(verdict(npmPolicySource("lodash", registryOf), "plugin")).toEqual({ allowed: true });
    expect(verdict(npmPolicySource("lodash", () => "https://registry.npmjs.org/"), "plugin")).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
    expect(verdict(npmPolicySource("@bad/x", () => "https://npm.corp.example/"), "plugin")).toMatchObject({ code: "EPOLICY_BLOCKED" });
    // A git spec or a tarball URL of an allowed scope's name is not a registry package of it.
    expect(verdict(npmPolicySource("github:acme/x", registryOf, "@acme/x"), "plugin")).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
    expect(verdict(npmPolicySource("https://evil.example/acme-x.tgz", registryOf, "@acme/x"), "plugin")).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
    expect(verdict(npmPolicySource("file:../x", registryOf, "@acme/x", "/work"), "plugin")).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
  });

  it("no policy, or no section, allows everything", () => {
    expect(checkSource(undefined, catalogPolicySource("github", "x/y"), "marketplace")).toEqual({ allowed: true });
    expect(checkSource(parseManagedPolicy("{}", FILE), catalogPolicySource("github", "x/y"), "plugin")).toEqual({ allowed: true });
  });

  it("an empty allowlist is a lockdown", () => {
    expect(checkSource(parseManagedPolicy(JSON.stringify({ marketplaces: { allow: [] } }), FILE), catalogPolicySource("github", "acme/x"), "marketplace")).toMatchObject({ code: "EPOLICY_NOT_ALLOWED" });
  });

  it("required and forbidden name npm plugins, marketplace ids, and a bare name in every marketplace", () => {
    expect(refused(() => assertNotForbidden(policy, "@acme/leaky")).code).toBe("EPOLICY_FORBIDDEN");
    expect(refused(() => assertNotForbidden(policy, "spy@any")).code).toBe("EPOLICY_FORBIDDEN");
    expect(() => assertNotForbidden(policy, "spy@other")).not.toThrow();
    expect(refused(() => assertNotRequired(policy, "audit-log@corp", "disable")).code).toBe("EPOLICY_REQUIRED");
    expect(refused(() => assertNotRequired(policy, "audit-log", "uninstall")).code).toBe("EPOLICY_REQUIRED");
    expect(() => assertNotRequired(policy, "@x/audit-log", "uninstall")).not.toThrow();
  });
});
