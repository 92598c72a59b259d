/**
 * The shortcuts that spare a state change npa's first call (core/npm-spec.ts): a spec that
 * `isRegistryVersionSpec` accepts must be one npa reads from the registry (never git) without
 * throwing (so the plugins package.json check, which refuses what npa refuses and judges git
 * specs, has nothing to say about it), and a name `parsePackageName` takes without npa must be one
 * npa reads as itself with the range `*`. Hostile and generated inputs, held against npa itself.
 */
import { describe, expect, it } from "vitest";
import { isRegistryVersionSpec, looksLikePlainPackageName, npa } from "../../src/core/npm-spec.js";
import { dependencySpecIssue } from "../../src/manifest/plugins-package.js";
import { npmNameProblem } from "../../src/manifest/names.js";
import { parsePackageName } from "../../src/plugins/spec.js";

/** Deterministic strings over `alphabet` (an LCG: the same corpus every run). */
function generated(alphabet: string, count: number, maxLength: number): string[] {
  let seed = 44;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  return Array.from({ length: count }, () => Array.from({ length: 1 + (next() % maxLength) }, () => alphabet[next() % alphabet.length]).join(""));
}

const HOSTILE_SPECS = [
  "^1.0.0", "~1.2.3", "1.2.3", "0.0.0", "01.2.3", "^01.2.3", "^1.0.99999999999999999999", "~9007199254740993.0.0", "^999999999999999.0.0", "^1.0.0-beta", "1.0.0+build", "^1.0.0 || ^2.0.0", "1.x", "*", "latest", "",
  "github:a/b", "a/b", "git+ssh://git@github.com/a/b.git", "git+file:///tmp/r", "file:../x", "../x", "/abs", "~/x", "c:/x",
  "1.0.0.tgz", "x.tar.gz", "npm:other@1", "https://example.com/x.tgz", "--upload-pack=evil", "^1.0.0\n", " 1.0.0", "1.0.0 ",
];

const HOSTILE_NAMES = [
  "foo", "@scope/foo", "foo.js", "foo-bar_baz", "a~b", "0", "foo.tgz", "foo.tar", "foo.tar.gz", "Foo", "@Scope/foo", "foo@1", "foo@",
  "@scope", "@scope/", "a/b", "node_modules", "favicon.ico", "http", "fs", ".foo", "_foo", "-foo", "~foo", "git+ssh://x", "file:x",
  "github:a/b", "a".repeat(215), "foo bar", "foo%20", "foo/../bar", "@scope/foo/bar", "@scope//foo",
];

describe("npm-spec shortcuts", () => {
  it("a spec isRegistryVersionSpec accepts is, for npa, a registry spec (hostile and generated specs)", () => {
    const numbers = generated("0123456789", 3000, 22);
    const shaped = numbers.map((n, i) => `${["", "^", "~", "v", "=", "^^"][i % 6]}${n}.${numbers[(i + 1) % numbers.length]}.${numbers[(i + 2) % numbers.length]}`);
    const specs = [...HOSTILE_SPECS, ...shaped, ...generated("^~0123456789.x-|< >=", 4000, 12)];
    let accepted = 0;
    for (const spec of specs) {
      if (!isRegistryVersionSpec(spec)) continue;
      accepted++;
      const parsed = npa.resolve("some-plugin", spec, "/");
      expect(["version", "range", "tag"], spec).toContain(parsed.type);
      expect(dependencySpecIssue("some-plugin", spec, "/dependencies/some-plugin"), spec).toBeUndefined();
    }
    // The shortcut is taken for what npm writes, and never for a spec that is not one.
    expect(accepted).toBeGreaterThan(10);
    for (const spec of ["^1.0.0", "~1.2.3", "1.2.3"]) expect(isRegistryVersionSpec(spec), spec).toBe(true);
    for (const spec of ["github:a/b", "a/b", "file:../x", "1.0.0.tgz", "^1.0.0-beta", "latest", "^1.0.0\n", " 1.0.0", "^01.2.3", "^1.0.99999999999999999999"]) expect(isRegistryVersionSpec(spec), spec).toBe(false);
  });

  it("specs the shortcut leaves to npa are still judged by it (a git spec, a spec npa refuses)", () => {
    expect(dependencySpecIssue("p", "git+ssh://git@github.com/a/b.git#--upload-pack=x", "/dependencies/p")?.code).toBeDefined();
    expect(dependencySpecIssue("p", "npm:", "/dependencies/p")?.code).toBe("ESPEC");
  });

  it("a name parsePackageName takes without npa is read by npa as itself (hostile and generated names)", () => {
    const names = [...HOSTILE_NAMES, ...generated("abcxyz019._~-@/A:+ ", 6000, 14)];
    let shortcut = 0;
    for (const name of names) {
      const viaNpa = (): string | Error => {
        try {
          const parsed = npa(name);
          return parsed.name === name && (parsed.type === "range" || parsed.type === "tag") && parsed.rawSpec === "*" ? name : new Error("not a name");
        } catch (error) {
          return error as Error;
        }
      };
      if (looksLikePlainPackageName(name) && npmNameProblem(name) === undefined) {
        shortcut++;
        expect(viaNpa(), name).toBe(name);
      }
      // Either way, parsePackageName gives npa's answer: the name, or EUSAGE.
      const expected = viaNpa();
      if (typeof expected === "string" && name.length <= 214) expect(parsePackageName(name), name).toBe(name);
      else expect(() => parsePackageName(name), name).toThrow(expect.objectContaining({ code: "EUSAGE" }));
    }
    expect(shortcut).toBeGreaterThan(100);
  });
});
