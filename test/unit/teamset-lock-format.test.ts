/**
 * The one writer of xcsh-team.lock.json (src/teamset/lock-format.ts): golden bytes, code-point
 * sort, idempotent rewrite, and — over generated sets whose project lives in a HOME — no home, no
 * absolute path and no ISO time in anything committed, while a machine string handed to the writer
 * is refused rather than written.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { validateClaudeTeamSettings } from "../../src/manifest/claude-team-settings.js";
import type { DeclaredSource, TeamDeclaration } from "../../src/manifest/team-declaration.js";
import { emptyLock, type TeamLock } from "../../src/manifest/team-lock.js";
import type { EffectiveSet } from "../../src/manifest/team-set.js";
import { buildEffectiveSet, editDeclaration, formatDeclaration, formatLock, isCanonicalLock, isSatisfied, parseLock, satisfies } from "../../src/teamset/index.js";
import { SRI, lock, sha, treeHash } from "../helpers/team-fixtures.js";

const GOLDEN = `{
  "lockfileVersion": 1,
  "marketplaces": {
    "acme-tools": {
      "commit": "4b1e000000000000000000000000000000000000",
      "source": {
        "source": "github",
        "repo": "acme/xcsh-marketplace",
        "ref": "v3"
      }
    },
    "in-repo": {
      "source": {
        "source": "directory",
        "path": "./tools/marketplace"
      }
    },
    "pinned": {
      "commit": "9f2c000000000000000000000000000000000000",
      "source": {
        "source": "git",
        "url": "https://git.acme.dev/mkt.git",
        "sha": "9f2c000000000000000000000000000000000000"
      }
    }
  },
  "marketplacePlugins": {
    "lint-helper@acme-tools": {
      "version": "2.1.3",
      "from": {
        "kind": "relative",
        "path": "plugins/lint-helper"
      },
      "hash": "tree1-sha256:5d41000000000000000000000000000000000000000000000000000000000000"
    },
    "reviewer@in-repo": {
      "version": "0.3.0",
      "from": {
        "kind": "github",
        "repo": "acme/reviewer",
        "commit": "77aa000000000000000000000000000000000000"
      },
      "hash": "tree1-sha256:aa00000000000000000000000000000000000000000000000000000000000000"
    }
  },
  "npm": {
    "@acme/xcsh-db": {
      "version": "2.0.1",
      "from": {
        "kind": "git",
        "url": "https://git.acme.dev/xcsh-db.git",
        "commit": "aa01000000000000000000000000000000000000"
      },
      "integrity": "sha512-AAAA",
      "dependencies": {}
    },
    "@acme/xcsh-search": {
      "version": "1.4.2",
      "integrity": "sha512-AAAA",
      "dependencies": {
        "lru-cache@10.2.0": "sha512-AAAA",
        "undici@6.19.2": "sha512-AAAA"
      }
    }
  }
}
`;

/** The same lock with every object's keys in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)]));
}

describe("canonical bytes", () => {
  it("golden: the design's lock", () => {
    expect(formatLock(lock())).toBe(GOLDEN);
  });

  it("key order in the input does not matter: sections, names and fields come out in schema and code-point order", () => {
    expect(formatLock(reversed(lock()) as TeamLock)).toBe(GOLDEN);
  });

  it("idempotent: format(parse(bytes)) === bytes, and a no-op is recognised", () => {
    expect(formatLock(parseLock(GOLDEN))).toBe(GOLDEN);
    expect(isCanonicalLock(GOLDEN)).toBe(true);
    // Same content, other bytes (what `--frozen` must reject as "would change").
    expect(isCanonicalLock(`${JSON.stringify(lock(), null, 2)}\n`.replace('"lockfileVersion": 1,\n', '"lockfileVersion": 1,\n\n'))).toBe(false);
    expect(isCanonicalLock(JSON.stringify(reversed(lock()), null, 2) + "\n")).toBe(false);
  });

  it("integer-like names sort by code point too (JSON.stringify would put 9 before 10)", () => {
    const l = lock();
    l.npm = { "9": { version: "1.0.0", integrity: SRI, dependencies: {} }, "10": { version: "1.0.0", integrity: SRI, dependencies: {} }, ...l.npm };
    const text = formatLock(l);
    const at = (key: string) => text.indexOf(`    ${JSON.stringify(key)}: {`);
    expect([at("10"), at("9"), at("@acme/xcsh-db"), at("@acme/xcsh-search")].every((i, n, all) => i > 0 && (n === 0 || all[n - 1]! < i))).toBe(true);
  });

  it("an empty lock still has its three sections", () => {
    expect(formatLock(emptyLock())).toBe('{\n  "lockfileVersion": 1,\n  "marketplaces": {},\n  "marketplacePlugins": {},\n  "npm": {}\n}\n');
  });
});

// ---- generated sets --------------------------------------------------------------------------

/** mulberry32: a small seeded generator, so a failing case can be replayed by its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const word = () => Array.from({ length: 3 + int(6) }, () => pick("abcdefghijklmnopqrstuvwxyz0123456789".split(""))).join("");
  const hex = (n: number) => Array.from({ length: n }, () => pick("0123456789abcdef".split(""))).join("");
  const version = () => `${int(5)}.${int(20)}.${int(20)}`;
  return { int, pick, word, hex, version, next };
}

type Gen = ReturnType<typeof random>;

function genSource(g: Gen, name: string): DeclaredSource {
  switch (g.pick(["github", "git", "url", "directory"] as const)) {
    case "github":
      return { source: "github", repo: `${g.word()}/${name}`, ...(g.int(2) ? { ref: `v${g.int(9)}` } : {}) };
    case "git":
      return { source: "git", url: `https://${g.word()}.dev/${g.word()}.git`, ...(g.int(2) ? { sha: g.hex(40) } : {}) };
    case "url":
      return { source: "url", url: `https://${g.word()}.dev/marketplace.json` };
    case "directory":
      return { source: "directory", path: `./${g.word()}/${g.word()}` };
  }
}

/** A declaration, Claude settings naming folders inside a project in `home`, and the set. */
function genProject(seed: number): { home: string; root: string; doc: TeamDeclaration; set: EffectiveSet; g: Gen } {
  const g = random(seed);
  const home = `/home/${g.word()}`;
  const root = path.posix.join(home, "src", g.word());
  const marketplaces: Record<string, { source: DeclaredSource }> = {};
  for (let i = 0; i < 1 + g.int(4); i++) {
    const name = `m-${g.word()}`;
    marketplaces[name] = { source: genSource(g, name) };
  }
  const plugins: TeamDeclaration["plugins"] = {};
  for (let i = 0; i < 1 + g.int(6); i++) {
    const spec = g.pick([`^${g.version()}`, g.version(), "latest", `git+https://${g.word()}.dev/${g.word()}.git#v1`, `https://${g.word()}.dev/x-1.0.0.tgz`, `~${g.version()}`]);
    plugins[g.int(2) ? `@${g.word()}/${g.word()}` : `xcsh-${g.word()}`] = { spec, ...(g.int(2) ? { features: g.int(2) ? "*" : [g.word()] } : {}), ...(g.int(3) === 0 ? { enabled: false } : {}) };
  }
  for (const name of Object.keys(marketplaces)) {
    for (let i = 0; i < g.int(3); i++) plugins[`p-${g.word()}@${name}`] = { ...(g.int(2) ? { version: `^${g.version()}` } : {}), ...(g.int(4) === 0 ? { enabled: false } : {}) };
  }
  const doc: TeamDeclaration = { version: 1, marketplaces, plugins };
  // Claude Code writes absolute folders; the project is in the home.
  const claudeFile = path.posix.join(root, ".claude", "settings.json");
  const claudeName = `c-${g.word()}`;
  const claudeRaw = { extraKnownMarketplaces: { [claudeName]: { source: { source: "directory", path: path.posix.join(root, "tools", g.word()) } } }, enabledPlugins: { [`q-${g.word()}@${claudeName}`]: true } };
  const claude = validateClaudeTeamSettings(claudeRaw, root, claudeFile);
  if (!claude.ok) throw new Error(JSON.stringify(claude.issues));
  const set = buildEffectiveSet({ root, declaration: { file: path.posix.join(root, "xcsh-team.json"), doc }, claude: claude.value });
  return { home, root, doc, set, g };
}

/** What a resolver could lock for `set` (WP3 writes the real one): random pins that satisfy it. */
function fakeLock(set: EffectiveSet, g: Gen): TeamLock {
  const l = emptyLock();
  for (const [name, { source }] of set.marketplaces) {
    l.marketplaces[name] = { ...(source.source === "github" || source.source === "git" ? { commit: source.sha ?? g.hex(40) } : {}), ...(source.source === "url" ? { sha256: g.hex(64) } : {}), source };
  }
  for (const plugin of set.plugins.values()) {
    if (!plugin.teamEnabled) continue;
    if (plugin.kind === "marketplace") {
      const min = plugin.version ? plugin.version.slice(1) : g.version();
      l.marketplacePlugins[plugin.key] = { version: min, from: g.int(2) ? { kind: "relative", path: `plugins/${g.word()}` } : { kind: "github", repo: `acme/${g.word()}`, commit: g.hex(40) }, hash: treeHash(g.hex(64)) };
      continue;
    }
    const spec = plugin.spec!;
    const version = /^[\^~]/.test(spec) ? spec.slice(1) : /^\d/.test(spec) ? spec : g.version();
    const from = spec.startsWith("git+") ? { kind: "git" as const, url: spec.slice(4).replace(/#.*$/, ""), commit: g.hex(40) } : spec.startsWith("https://") ? { kind: "tarball" as const, url: spec } : undefined;
    l.npm[plugin.key] = { version, ...(from ? { from } : {}), integrity: `sha512-${g.hex(20)}==`, dependencies: { [`${g.word()}@${g.version()}`]: SRI } };
  }
  return l;
}

const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** Every string of a JSON document, keys included. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)]);
  return [];
}

function assertNoMachineStrings(bytes: string, home: string): void {
  expect(bytes).not.toContain(home);
  expect(bytes).not.toMatch(ISO_TIME);
  for (const s of strings(JSON.parse(bytes))) {
    expect(path.posix.isAbsolute(s) || path.win32.isAbsolute(s) || /^~([/\\]|$)/.test(s), `machine path ${s}`).toBe(false);
  }
}

describe("property: committed files of generated sets", () => {
  const SEEDS = Array.from({ length: 200 }, (_, i) => i + 1);

  it("the lock: no home, absolute path or time; idempotent; satisfies its set", () => {
    for (const seed of SEEDS) {
      const { home, set, g } = genProject(seed);
      const l = fakeLock(set, g);
      const bytes = formatLock(l);
      assertNoMachineStrings(bytes, home);
      expect(formatLock(parseLock(bytes)), `seed ${seed}`).toBe(bytes);
      expect(isSatisfied(satisfies(set, parseLock(bytes))), `seed ${seed}`).toBe(true);
    }
  });

  it("the declaration after edits: no home, absolute path or time; idempotent", () => {
    for (const seed of SEEDS) {
      const { home, doc, g } = genProject(seed);
      const edited = editDeclaration(doc, { op: "add-plugin", key: `@x/${g.word()}`, entry: { spec: `^${g.version()}` } }, { file: "xcsh-team.json" });
      const bytes = formatDeclaration(edited);
      assertNoMachineStrings(bytes, home);
      expect(formatDeclaration(JSON.parse(bytes)), `seed ${seed}`).toBe(bytes);
    }
  });

  it("a machine string handed to the writer is refused, never written", () => {
    const hostile: ((l: TeamLock, home: string) => void)[] = [
      (l, home) => (l.marketplaces.m = { source: { source: "directory", path: `${home}/mkt` } }),
      (l, home) => (l.marketplaces.m = { source: { source: "directory", path: "~/mkt" } }),
      (l, home) => (l.marketplacePlugins["p@m"] = { version: "1.0.0", from: { kind: "relative", path: `${home}/p` }, hash: treeHash("1") }),
      (l, home) => (l.marketplacePlugins["p@m"] = { version: "1.0.0", from: { kind: "git", url: `file://${home}/repo`, commit: sha("1") }, hash: treeHash("1") }),
      (l, home) => (l.npm.x = { version: "1.0.0", from: { kind: "tarball", url: `file://${home}/x.tgz` }, integrity: SRI, dependencies: {} }),
      (l) => ((l.npm.x = { version: "1.0.0", integrity: SRI, dependencies: {} }), ((l.npm.x as Record<string, unknown>).installedAt = "2026-01-01T00:00:00.000Z")),
    ];
    for (const seed of SEEDS.slice(0, 20)) {
      const { home, set, g } = genProject(seed);
      for (const inject of hostile) {
        const l = fakeLock(set, g);
        inject(l, home);
        expect(() => formatLock(l), `seed ${seed}`).toThrow(XcshToolsError);
      }
    }
  });
});
