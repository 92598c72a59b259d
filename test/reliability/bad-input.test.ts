/**
 * Reliability suite 3 — bad input. Table-driven: each case builds a temp world, snapshots the
 * whole tree, runs the built CLI with one piece of bad input, and requires a coded error (JSON
 * `error.code`, and `Code:` on stderr for the human run), a non-zero exit of the documented kind
 * (2 usage/validation, 1 failure), the tree byte-identical afterwards, and no prototype pollution
 * in the CLI process (a preload reports new keys on Object.prototype at exit).
 *
 * Deterministic: no randomness (fixtures are fixed strings), loopback only (a dead port as the
 * registry, silent TCP servers for the timeouts), short configured timeouts.
 */
import { symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import { pluginEntries, tgzBytes, type TarEntry } from "./helpers-tar.js";
import { POLLUTED_MARK, makeRelWorld, startSilentServer, type RelWorld } from "./helpers-world.js";
import { publishRaw } from "../helpers/publish-raw.js";

/** One bad input. */
interface Case {
  title: string;
  /** Prepare the world (run before the snapshot). */
  setup?: (w: RelWorld) => Promise<void>;
  args: (w: RelWorld) => string[];
  /** Expected error code (exact, or a pattern). */
  code: string | RegExp;
  exit: 1 | 2;
  /** The error of the JSON document (default `doc.error`; `validate` reports `errors[0]`). */
  jsonError?: (doc: any) => { code: string; message: string } | undefined;
  /** The message must match (e.g. that a size limit, not a type check, refused the file). */
  message?: RegExp;
  env?: (w: RelWorld) => NodeJS.ProcessEnv;
  /** Also run without --json and check `Code:` on stderr (default true). */
  human?: boolean;
  /** Extra checks after the run. */
  after?: (w: RelWorld) => Promise<void>;
}

let silent: { port: number; close(): Promise<void> };
let ran = 0;

beforeAll(async () => {
  await buildDist();
  silent = await startSilentServer();
}, 180_000);
afterAll(async () => {
  await silent?.close();
  console.log(`bad-input: ${ran} cases`);
});

// ---- fixtures ---------------------------------------------------------------------------------

const LONG = "a".repeat(10_000);
const DEEP = 10_000;
/** `{"k": [[[[...]]]]}` nested `DEEP` levels. */
const deepArray = () => `${"[".repeat(DEEP)}${"]".repeat(DEEP)}`;
/** A valid JSON document bigger than the 16 MiB limit of JSON state files. */
const HUGE_BYTES = 17 * 1024 * 1024;
const hugeString = () => "x".repeat(HUGE_BYTES);

async function addMarket(w: RelWorld): Promise<void> {
  const r = await w.cli(["marketplace", "add", w.market, "--json"]);
  if (r.code !== 0) throw new Error(`setup: marketplace add failed\n${r.stdout}\n${r.stderr}`);
}

/** Add the marketplace; its bad entry must be reported as a skipped-entry warning. */
async function addMarketWarning(w: RelWorld, warning: RegExp): Promise<void> {
  const r = await w.cli(["marketplace", "add", w.market, "--json"]);
  if (r.code !== 0) throw new Error(`setup: marketplace add failed\n${r.stdout}\n${r.stderr}`);
  expect(r.json().warnings.join("\n")).toMatch(warning);
}

/** The state files and catalogs, each with the command that reads it and the code it gives. */
interface StateFile {
  id: string;
  /** Absolute path of the file in the world. */
  file: (w: RelWorld) => string;
  /** A valid document, to put bad values into. */
  valid: Record<string, unknown>;
  /** A key of `valid` whose value is a map of names (where `__proto__` goes). */
  map?: string;
  /** A valid entry of that map. */
  entry?: unknown;
  /** A key of `valid` that must be an object, given a wrong type. */
  wrongType: Record<string, unknown>;
  setup?: (w: RelWorld) => Promise<void>;
  args: (w: RelWorld) => string[];
  code: string | RegExp;
  exit: 1 | 2;
  /** A key of the document that must be an object (the wrong-type target of "deep"). */
  bigKey: string;
  jsonError?: Case["jsonError"];
}

const plugins = (w: RelWorld, rel: string) => path.join(w.xcshHome, "plugins", rel);
const installGood = (w: RelWorld) => ["install", w.plugin];

const STATE_FILES: StateFile[] = [
  {
    id: "plugins/package.json",
    file: (w) => plugins(w, "package.json"),
    valid: { name: "xcsh-plugins", private: true, dependencies: {} },
    map: "dependencies",
    entry: "^1.0.0",
    wrongType: { dependencies: ["not", "an", "object"] },
    args: installGood,
    code: "ESTATE_FILE",
    exit: 1,
    bigKey: "dependencies",
  },
  {
    id: "plugins/xcsh-plugins.lock.json",
    file: (w) => plugins(w, "xcsh-plugins.lock.json"),
    valid: { plugins: {}, settings: {} },
    map: "plugins",
    entry: { version: "1.0.0", enabledFeatures: null, enabled: true },
    wrongType: { plugins: 42 },
    args: installGood,
    code: "ESTATE_FILE",
    exit: 1,
    bigKey: "plugins",
  },
  {
    id: "plugins/installed_plugins.json (user)",
    file: (w) => plugins(w, "installed_plugins.json"),
    valid: { version: 2, plugins: {} },
    map: "plugins",
    entry: [],
    wrongType: { plugins: "hello@acme" },
    setup: addMarket,
    args: () => ["install", "hello@acme"],
    code: /^E(STATE_FILE|REGISTRY_FILE|INSTALLED_FILE)$/,
    exit: 1,
    bigKey: "plugins",
  },
  {
    id: "<project>/.xcsh/plugins/installed_plugins.json",
    file: (w) => path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json"),
    valid: { version: 2, plugins: {} },
    map: "plugins",
    entry: [],
    wrongType: { plugins: [1, 2] },
    setup: addMarket,
    args: () => ["install", "hello@acme", "--scope", "project"],
    code: /^E(STATE_FILE|REGISTRY_FILE|INSTALLED_FILE)$/,
    exit: 1,
    bigKey: "plugins",
  },
  {
    id: "marketplaces.json",
    file: (w) => path.join(w.xcshHome, "marketplaces.json"),
    valid: { version: 1, marketplaces: [] },
    wrongType: { marketplaces: { acme: true } },
    args: (w) => ["marketplace", "add", w.market],
    code: /^E(STATE_FILE|REGISTRY_FILE)$/,
    exit: 1,
    bigKey: "marketplaces",
  },
  {
    id: "<project>/.xcsh/plugin-overrides.json",
    file: (w) => path.join(w.cwd, ".xcsh", "plugin-overrides.json"),
    valid: { disabled: [] },
    wrongType: { disabled: "good-plugin" },
    args: (w) => ["validate", path.join(w.cwd, ".xcsh", "plugin-overrides.json")],
    code: /^E(JSONPARSE|TYPE|JSON_TOO_LARGE|JSON_DEPTH)$/,
    exit: 1,
    bigKey: "disabled",
    jsonError: (doc) => doc.errors?.[0],
  },
  {
    id: "catalog .xcsh-plugin/marketplace.json",
    file: (w) => path.join(w.market, catalogPath()),
    valid: catalog("acme", []),
    wrongType: { plugins: { hello: "./plugins/hello" } },
    args: (w) => ["marketplace", "add", w.market],
    code: /^ECATALOG_INVALID$/,
    exit: 2,
    bigKey: "plugins",
  },
  {
    id: "plugin.json of a catalog plugin",
    file: (w) => path.join(w.market, "plugins", "hello", ".xcsh-plugin", "plugin.json"),
    valid: { name: "hello", version: "1.0.0", description: "the hello plugin" },
    wrongType: { name: ["hello"] },
    setup: addMarket,
    args: () => ["install", "hello@acme"],
    code: /^EPLUGIN_(INVALID|MANIFEST)$/,
    exit: 2,
    bigKey: "name",
  },
  {
    id: "package.json of a plugin folder",
    file: (w) => path.join(w.plugin, "package.json"),
    valid: { name: "good-plugin", version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } },
    wrongType: { xcsh: "./t.js" },
    args: installGood,
    code: /^E(PLUGIN_INVALID|NOT_A_PLUGIN|TARBALL|JSONPARSE|NOT_FOUND|INSTALL|SPEC)$/,
    exit: 2,
    bigKey: "xcsh",
  },
  {
    id: "settings .xcsh-toolsrc",
    file: (w) => path.join(w.cwd, ".xcsh-toolsrc"),
    valid: { lockWaitMs: 1000 },
    wrongType: { timeouts: "fast" },
    args: () => ["list"],
    code: "ECONFIG",
    exit: 2,
    bigKey: "timeouts",
  },
  {
    id: "settings xcsh-tools.config.json",
    file: (w) => path.join(w.cwd, "xcsh-tools.config.json"),
    valid: { lockWaitMs: 1000 },
    wrongType: { builtInTools: "read" },
    args: () => ["list"],
    code: "ECONFIG",
    exit: 2,
    bigKey: "builtInTools",
  },
  {
    id: "settings package.json#xcsh-tools",
    file: (w) => path.join(w.cwd, "package.json"),
    valid: { name: "project", "xcsh-tools": { lockWaitMs: 1000 } },
    wrongType: { "xcsh-tools": { allowScripts: "yes please" } },
    args: () => ["list"],
    code: "ECONFIG",
    exit: 2,
    bigKey: "xcsh-tools",
  },
  {
    id: "user settings ~/.xcsh/xcsh-tools.json",
    file: (w) => path.join(w.xcshHome, "xcsh-tools.json"),
    valid: { lockWaitMs: 1000 },
    wrongType: { output: ["never"] },
    args: () => ["list"],
    code: "ECONFIG",
    exit: 2,
    bigKey: "output",
  },
];

const cases: Case[] = [];

// ---- install specs ----------------------------------------------------------------------------

const SPEC_CASES: Array<[string, string, string | RegExp, 1 | 2]> = [
  ["shell ; in a name", "x;rm -rf ~", "ESPEC", 2],
  ["$(...) in a name", "$(touch pwned)", "ESPEC", 2],
  ["backticks in a name", "`touch pwned`", "ESPEC", 2],
  ["a pipe", "good|sh", "ESPEC", 2],
  ["&& in a version", "good@1.0.0&&id", "ESPEC", 2],
  ["> redirection in a tag", "good@latest>x", "ESPEC", 2],
  ["shell syntax in a git URL", "git+https://127.0.0.1/x.git#$(id)", "ESPEC", 2],
  ["backslashes (a Windows path: a folder that does not exist)", "C:\\Windows\\evil", "ENOT_FOUND", 1],
  ["10k-character package name", LONG, "ESPEC", 2],
  ["10k-character scoped name", `@acme/${LONG}`, "ESPEC", 2],
  ["10k-character version", `good@${"1".repeat(LONG.length)}`, "ESPEC", 2],
  ["unknown protocol foo://", "foo://x", "ESPEC", 2],
  ["javascript: URL", "javascript:alert(1)", "ESPEC", 2],
  ["ftp:// tarball", "ftp://127.0.0.1/x.tgz", "ESPEC", 2],
  ["data: URL", "data:text/plain,hello", "ESPEC", 2],
  ["npm alias", "good@npm:evil", "ESPEC", 2],
  ["control character", "good\u0001name", "ESPEC", 2],
  ["newline", "good\nevil", "ESPEC", 2],
  ["DEL character", "good\u007f", "ESPEC", 2],
  ["empty spec", "", "ESPEC", 2],
  ["blank spec", "   ", "ESPEC", 2],
  ["bad feature name", "good[a;b]", "ESPEC", 2],
  ["text after the feature list", "good[a]junk", "ESPEC", 2],
  ["nothing before the feature list", "[a,b]", "ESPEC", 2],
  ["leading dot (a folder that does not exist)", ".hidden", "ENOT_FOUND", 1],
  ["percent-encoded traversal (a folder name, not decoded)", "..%2f..%2fetc", "ENOT_FOUND", 1],
  ["2049-character git URL", `git+https://127.0.0.1/${"x".repeat(2030)}.git`, "ESPEC", 2],
  ["path traversal to a folder without package.json", "../../../../../../etc", "ENOT_FOUND", 1],
  ["traversal to a file that is not a tarball", "../../../../../../etc/passwd", /^E(NOT_FOUND|TARBALL|SPEC)$/, 1],
  ["file: URL outside", "file:///etc", "ENOT_FOUND", 1],
];
for (const [title, spec, code, exit] of SPEC_CASES) {
  cases.push({ title: `install spec: ${title}`, args: () => ["install", spec], code, exit, after: noPwned });
}
async function noPwned(w: RelWorld): Promise<void> {
  const { access } = await import("node:fs/promises");
  await expect(access(path.join(w.cwd, "pwned"))).rejects.toThrow();
}

cases.push(
  { title: "uninstall: a path instead of a name", args: () => ["uninstall", "../../etc"], code: "EUSAGE", exit: 2 },
  { title: "uninstall: shell syntax", args: () => ["uninstall", "x;rm -rf ~"], code: "EUSAGE", exit: 2 },
  { title: "update: a version instead of a name", args: () => ["update", "good@1.0.0"], code: "EUSAGE", exit: 2 },
  { title: "unlink: 10k-character name", args: () => ["unlink", LONG], code: "EUSAGE", exit: 2 },
  {
    // The tarball URL failed, not a registry: the error says so and names the URL.
    title: "install: a tarball URL on an unreachable host",
    args: () => ["install", "http://127.0.0.1:9/good-1.0.0.tgz"],
    code: "ETARBALL",
    message: /http:\/\/127\.0\.0\.1:9\/good-1\.0\.0\.tgz/,
    exit: 1,
    human: false,
  },
  {
    title: "install: a registry that accepts connections and never answers (fetch timeout)",
    args: () => ["install", "good-plugin-from-registry"],
    env: () => ({ npm_config_registry: `http://127.0.0.1:${silent.port}/`, XCSH_TOOLS_FETCH_TIMEOUT_MS: "1500" }),
    code: /^E(REGISTRY|FETCH_TIMEOUT)$/,
    exit: 1,
    human: false,
  },
);

// ---- tarballs ---------------------------------------------------------------------------------

const EVIL_OUTSIDE = path.join(os.tmpdir(), "xcsh-tools-rel-evil-outside");
const TARBALLS: Array<[string, TarEntry[]]> = [
  ["a ../ entry", [{ name: "package/../../evil-dotdot", content: "x" }]],
  ["a deep ../ entry", [{ name: "package/a/../../../../../../../../tmp/xcsh-tools-rel-evil-outside", content: "x" }]],
  ["an absolute entry", [{ name: EVIL_OUTSIDE, content: "x" }]],
  ["a symlink to /etc/passwd", [{ name: "package/passwd", type: "symlink", linkname: "/etc/passwd" }]],
  ["a symlink to ../../x", [{ name: "package/up", type: "symlink", linkname: "../../x" }]],
  ["a hard link to /etc/passwd", [{ name: "package/hard", type: "hardlink", linkname: "/etc/passwd" }]],
  ["a hard link out by ../", [{ name: "package/hard2", type: "hardlink", linkname: "../../../../../../etc/passwd" }]],
];
for (const [title, evil] of TARBALLS) {
  cases.push({
    title: `tarball with ${title}`,
    setup: async (w) => {
      await writeFile(path.join(w.cwd, "evil.tgz"), tgzBytes([...pluginEntries("evil-pkg", "evil_tool"), ...evil]));
    },
    args: () => ["install", "./evil.tgz"],
    code: "ETARBALL_UNSAFE",
    exit: 2,
    after: async (w) => {
      const { access } = await import("node:fs/promises");
      for (const outside of [EVIL_OUTSIDE, path.join(w.root, "evil-dotdot"), path.join(w.xcshHome, "evil-dotdot"), path.join(w.root, "x")]) {
        await expect(access(outside), outside).rejects.toThrow();
      }
    },
  });
}
cases.push(
  {
    title: "tarball that is not gzip",
    setup: async (w) => void (await writeFile(path.join(w.cwd, "evil.tgz"), "this is not gzip\n")),
    args: () => ["install", "./evil.tgz"],
    code: "ETARBALL",
    exit: 1,
  },
  {
    title: "tarball that is gzip but not tar",
    setup: async (w) => void (await writeFile(path.join(w.cwd, "evil.tgz"), (await import("node:zlib")).gzipSync("not a tar archive at all"))),
    args: () => ["install", "./evil.tgz"],
    code: "ETARBALL",
    exit: 1,
  },
  {
    title: "tarball without package.json",
    setup: async (w) => void (await writeFile(path.join(w.cwd, "evil.tgz"), tgzBytes([{ name: "package/t.js", content: "export default 1;" }]))),
    args: () => ["install", "./evil.tgz"],
    code: "ETARBALL",
    exit: 1,
  },
);

// ---- marketplace sources, names and plugin ids ------------------------------------------------

cases.push(
  { title: "marketplace add: ftp:// source", args: () => ["marketplace", "add", "ftp://127.0.0.1/m"], code: "ESOURCE_UNKNOWN", exit: 2 },
  { title: "marketplace add: javascript: source", args: () => ["marketplace", "add", "javascript:alert(1)"], code: "ESOURCE_UNKNOWN", exit: 2 },
  { title: "marketplace add: shell syntax", args: () => ["marketplace", "add", "$(touch pwned)"], code: "ESOURCE_UNKNOWN", exit: 2, after: noPwned },
  { title: "marketplace add: traversal to nowhere", args: () => ["marketplace", "add", "../../../../../../nonexistent-xcsh"], code: "ESOURCE_NOT_FOUND", exit: 1 },
  { title: "marketplace add: a folder without a catalog (/etc)", args: () => ["marketplace", "add", "/etc"], code: "ECATALOG_NOT_FOUND", exit: 1 },
  { title: "marketplace add: 10k-character source", args: () => ["marketplace", "add", LONG], code: "ESOURCE_UNKNOWN", exit: 2 },
  {
    title: "marketplace add: a git server that never answers (timeout)",
    args: () => ["marketplace", "add", `http://127.0.0.1:${silent.port}/market.git`],
    env: () => ({ XCSH_TOOLS_GIT_TIMEOUT_MS: "1500" }),
    code: "EGIT_TIMEOUT",
    exit: 1,
  },
  {
    title: "marketplace add: a fake git that hangs, with a child holding its pipes (timeout)",
    setup: async (w) => {
      await w.write("fakebin/git", "#!/bin/sh\nsleep 60 &\nsleep 60\n");
      const { chmod } = await import("node:fs/promises");
      await chmod(path.join(w.root, "fakebin", "git"), 0o755);
    },
    args: () => ["marketplace", "add", "https://127.0.0.1/market.git"],
    env: (w) => ({ PATH: `${path.join(w.root, "fakebin")}:${process.env.PATH}`, XCSH_TOOLS_GIT_TIMEOUT_MS: "1000" }),
    code: "EGIT_TIMEOUT",
    exit: 1,
  },
  {
    title: "marketplace add: a catalog URL that never answers (timeout)",
    args: () => ["marketplace", "add", `http://127.0.0.1:${silent.port}/marketplace.json`],
    env: () => ({ XCSH_TOOLS_FETCH_TIMEOUT_MS: "1000" }),
    code: "EFETCH_TIMEOUT",
    exit: 1,
  },
  { title: "marketplace add --name with capitals", args: (w) => ["marketplace", "add", w.market, "--name", "Acme"], code: "EMARKETPLACE_NAME", exit: 2 },
  { title: "marketplace add --name with traversal", args: (w) => ["marketplace", "add", w.market, "--name", "../evil"], code: "EMARKETPLACE_NAME", exit: 2 },
  { title: "marketplace add --name of 65 characters", args: (w) => ["marketplace", "add", w.market, "--name", "a".repeat(65)], code: "EMARKETPLACE_NAME", exit: 2 },
  { title: "marketplace add --name with a slash", args: (w) => ["marketplace", "add", w.market, "--name", "a/b"], code: "EMARKETPLACE_NAME", exit: 2 },
  {
    title: "catalog whose name breaks the naming rules",
    setup: async (w) => void (await w.write(path.join(w.market, catalogPath()), catalog("../Evil Name", []))),
    args: (w) => ["marketplace", "add", w.market],
    code: /^E(CATALOG_INVALID|MARKETPLACE_NAME)$/,
    exit: 2,
  },
  {
    title: "catalog plugin whose name breaks the naming rules: skipped at add, refused at install",
    setup: async (w) => {
      await w.write(path.join(w.market, catalogPath()), catalog("acme", [{ name: "../../etc", source: "./plugins/hello" }, { name: "hello", source: "./plugins/hello" }]));
      await addMarketWarning(w, /"\.\.\/\.\.\/etc" is invalid/);
    },
    args: () => ["install", "../../etc@acme"],
    code: "EPLUGIN_ID",
    exit: 2,
  },
  {
    title: "catalog plugin source escaping the marketplace: skipped at add, not installable",
    setup: async (w) => {
      await w.write(path.join(w.market, catalogPath()), catalog("acme", [{ name: "escape", source: "../../../../etc" }, { name: "hello", source: "./plugins/hello" }]));
      await addMarketWarning(w, /"\.\.\/\.\.\/\.\.\/\.\.\/etc" must stay inside the marketplace/);
    },
    args: () => ["install", "escape@acme"],
    // The install names the entry's own problem (a validation error of the catalog's data).
    code: "EENTRY_ESCAPE",
    exit: 2,
  },
  {
    title: "catalog with a NUL in the marketplace name",
    setup: async (w) => void (await w.write(path.join(w.market, catalogPath()), catalog("ac\u0000me", []))),
    args: (w) => ["marketplace", "add", w.market],
    code: /^E(CATALOG_INVALID|MARKETPLACE_NAME)$/,
    exit: 2,
  },
  {
    title: "catalog symlinked out of the marketplace",
    setup: async (w) => {
      const { rm } = await import("node:fs/promises");
      await w.write("elsewhere/marketplace.json", catalog("acme", []));
      await rm(path.join(w.market, catalogPath()));
      await symlink(path.join(w.root, "elsewhere", "marketplace.json"), path.join(w.market, catalogPath()));
    },
    args: (w) => ["marketplace", "add", w.market],
    code: "ECATALOG_NOT_FOUND",
    exit: 1,
  },
  { title: "plugin id with capitals", setup: addMarket, args: () => ["install", "Hello@acme"], code: "EPLUGIN_ID", exit: 2 },
  { title: "plugin id with a capitalised marketplace", setup: addMarket, args: () => ["install", "hello@ACME"], code: "EPLUGIN_ID", exit: 2 },
  { title: "plugin id with a traversal marketplace (an npm name@path: no such folder)", setup: addMarket, args: () => ["install", "hello@../../x"], code: "ENOT_FOUND", exit: 1 },
  { title: "plugin id longer than 128", setup: addMarket, args: () => ["install", `${"a".repeat(130)}@acme`], code: "EPLUGIN_ID", exit: 2 },
  { title: "uninstall a plugin id with an invalid name", setup: addMarket, args: () => ["uninstall", "bad-@acme"], code: "EPLUGIN_ID", exit: 2 },
  { title: "disable-style id with shell syntax", setup: addMarket, args: () => ["uninstall", "x;rm@acme"], code: "EPLUGIN_ID", exit: 2 },
  { title: "marketplace remove: a name breaking the rules", setup: addMarket, args: () => ["marketplace", "remove", "../acme"], code: "EMARKETPLACE_NOT_FOUND", exit: 1 },
);

// ---- settings of the wrong type (environment) --------------------------------------------------

cases.push(
  { title: "env XCSH_TOOLS_GIT_TIMEOUT_MS is not a number", args: () => ["list"], env: () => ({ XCSH_TOOLS_GIT_TIMEOUT_MS: "soon" }), code: "ECONFIG", exit: 2 },
  { title: "env XCSH_TOOLS_ALLOW_SCRIPTS is not a boolean", args: () => ["list"], env: () => ({ XCSH_TOOLS_ALLOW_SCRIPTS: "maybe" }), code: "ECONFIG", exit: 2 },
  { title: "env XCSH_TOOLS_REGISTRY is not an http URL", args: () => ["list"], env: () => ({ XCSH_TOOLS_REGISTRY: "javascript:alert(1)" }), code: "ECONFIG", exit: 2 },
  { title: "env XCSH_TOOLS_COLOR is not a choice", args: () => ["list"], env: () => ({ XCSH_TOOLS_COLOR: "purple" }), code: "ECONFIG", exit: 2 },
  { title: "settings: negative timeout", setup: async (w) => void (await w.write(path.join(w.cwd, ".xcsh-toolsrc"), { timeouts: { gitMs: -5 } })), args: () => ["list"], code: "ECONFIG", exit: 2 },
  { title: "settings: a registry that is a number", setup: async (w) => void (await w.write(path.join(w.cwd, ".xcsh-toolsrc"), { registry: 42 })), args: () => ["list"], code: "ECONFIG", exit: 2 },
);

// ---- every state file malformed: not JSON, wrong types, huge, deep, __proto__ ----------------

const WRAPPED = "STATE_FILE|REGISTRY_FILE|CONFIG|CATALOG_INVALID|PLUGIN_INVALID|PLUGIN_MANIFEST";
const isSettings = (sf: StateFile) => /settings/.test(sf.id);
for (const sf of STATE_FILES) {
  const write = (w: RelWorld, text: string) => w.write(sf.file(w), text);
  const base = (w: RelWorld) => (sf.setup ? sf.setup(w) : Promise.resolve());
  const common = { args: sf.args, exit: sf.exit, ...(sf.jsonError ? { jsonError: sf.jsonError } : {}) };
  cases.push(
    {
      title: `${sf.id}: not JSON`,
      setup: async (w) => {
        await base(w);
        await write(w, '{"name": "xcsh-plugins", oops');
      },
      ...common,
      code: isSettings(sf) ? "ECONFIG" : sf.jsonError ? "EJSONPARSE" : sf.code,
    },
    {
      title: `${sf.id}: wrong types`,
      setup: async (w) => {
        await base(w);
        await write(w, JSON.stringify({ ...sf.valid, ...sf.wrongType }));
      },
      ...common,
      code: sf.code,
      human: false,
    },
    {
      title: `${sf.id}: ${sf.id.includes("package.json#") ? "the xcsh-tools key is" : "the document is"} an array instead of an object`,
      setup: async (w) => {
        await base(w);
        await write(w, sf.id.includes("package.json#") ? JSON.stringify({ name: "project", "xcsh-tools": [] }) : "[]");
      },
      ...common,
      code: sf.code,
      human: false,
    },
    {
      // Valid in shape (the padding is an unknown key, which readers keep): only the size limit refuses it.
      title: `${sf.id}: huge (17 MiB, valid shape)`,
      setup: async (w) => {
        await base(w);
        await write(w, JSON.stringify({ ...sf.valid, "x-padding": hugeString() }));
      },
      ...common,
      code: sf.jsonError ? "EJSON_TOO_LARGE" : new RegExp(`^E(JSON_TOO_LARGE|${WRAPPED})$`),
      message: /more than the 16777216 bytes/,
      human: false,
    },
    {
      title: `${sf.id}: nested ${DEEP} levels deep (valid shape)`,
      setup: async (w) => {
        await base(w);
        if (sf.id.includes("package.json#")) await write(w, `{"name":"project","xcsh-tools":{"lockWaitMs":1000,"x-deep":${deepArray()}}}`);
        else await write(w, `{${JSON.stringify(sf.valid).slice(1, -1)},"x-deep": ${deepArray()}}`);
      },
      ...common,
      code: sf.jsonError ? "EJSON_DEPTH" : new RegExp(`^E(JSON_DEPTH|${WRAPPED})$`),
      // YAML-or-JSON files (.xcsh-toolsrc) meet the YAML parser's own depth limit first.
      message: /nests more than 256 levels deep|nesting exceeded maxDepth/,
      human: false,
    },
  );
}

// Each case is its own world and processes: they run a few at a time (vitest's maxConcurrency).
describe.concurrent("bad input: a coded error, a non-zero exit, nothing changed on disk", () => {
  for (const [index, c] of cases.entries()) {
    it(`#${index + 1} ${c.title}`, async () => {
      const w = await makeRelWorld(undefined, { trustProject: true });
      try {
        if (c.setup) await c.setup(w);
        const before = await w.snapshot();
        const env = c.env ? c.env(w) : {};
        const r = await w.cli([...c.args(w), "--json"], env, 60_000);
        const describe = `exit ${r.code}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
        expect(r.timedOut, describe).toBe(false);
        expect(r.code, describe).toBe(c.exit);
        const doc = r.json();
        const error = c.jsonError ? c.jsonError(doc) : doc.error;
        expect(error?.code, describe).toMatch(typeof c.code === "string" ? new RegExp(`^${c.code}$`) : c.code);
        expect(error!.message, describe).toEqual(expect.any(String));
        if (c.message) expect(error!.message, describe).toMatch(c.message);
        expect(r.stderr).not.toContain(POLLUTED_MARK);
        if (c.human !== false) {
          const h = await w.cli(c.args(w), env, 60_000);
          expect(h.code, h.stderr).toBe(c.exit);
          if (!c.jsonError) expect(h.stderr, h.stderr).toContain(`Code: ${error!.code}`);
          else expect(h.stdout, h.stdout).toContain(error!.code);
          expect(h.stderr).not.toContain(POLLUTED_MARK);
        }
        expect(await w.snapshot()).toEqual(before);
        if (c.after) await c.after(w);
        ran++;
      } finally {
        await w.cleanup();
      }
    }, 120_000);
  }
});

// ---- __proto__ and constructor keys: no pollution; preserved, or refused with a code ----------

describe.concurrent("__proto__ / constructor keys in every state file", () => {
  for (const sf of STATE_FILES) {
    it(`${sf.id}: __proto__ and constructor keys`, async () => {
      const w = await makeRelWorld(undefined, { trustProject: true });
      try {
        if (sf.setup) await sf.setup(w);
        const hostile = sf.map
          ? `{${JSON.stringify(sf.valid).slice(1, -1).replace(`"${sf.map}":{}`, `"${sf.map}":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}`)},"__proto__":{"polluted":"yes"}}`
          : `{${JSON.stringify(sf.valid).slice(1, -1)},"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}`;
        await w.write(sf.file(w), hostile);
        const before = await w.snapshot();
        const r = await w.cli([...sf.args(w), "--json"]);
        const describe = `exit ${r.code}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
        expect(r.timedOut, describe).toBe(false);
        expect(r.stderr, describe).not.toContain(POLLUTED_MARK);
        if (r.code === 0) {
          // Accepted: the hostile keys were kept as plain data (the file still holds them).
          const { readFile } = await import("node:fs/promises");
          expect(await readFile(sf.file(w), "utf8")).toContain('"__proto__"');
        } else {
          expect(r.json().error.code, describe).toMatch(/^E[A-Z_]+$/);
          expect(r.json().error.code, describe).not.toBe("EUNEXPECTED");
          expect(await w.snapshot()).toEqual(before);
        }
        ran++;
      } finally {
        await w.cleanup();
      }
    }, 120_000);
  }
});

describe("the pollution detector", () => {
  it("reports a key added to Object.prototype (so its silence above means something)", async () => {
    const w = await makeRelWorld(undefined, { trustProject: true });
    try {
      const { runProcess } = await import("../helpers/run-cli.js");
      const r = await runProcess(process.execPath, ["-e", "({}).__proto__.polluted = 'yes'"], { cwd: w.cwd, env: { PATH: process.env.PATH, NODE_OPTIONS: w.env.NODE_OPTIONS } });
      expect(r.stderr).toContain(`${POLLUTED_MARK}: polluted`);
    } finally {
      await w.cleanup();
    }
  });
});

/** The package document of the hostile registry packages: a plugin with one tool module. */
const PLUGIN_MANIFEST = { type: "module", xcsh: { tools: "./t.js" } };

describe("a hostile tarball served by the registry", () => {
  it("install <name> of a registry package whose tarball climbs out is ETARBALL_UNSAFE, nothing changed", async () => {
    const { useGlobalRegistry } = await import("../helpers/global-registry.js");
    const reg = await useGlobalRegistry();
    const name = `evil-reg-${Date.now().toString(36)}`;
    await publishRaw(reg, name, tgzBytes([...pluginEntries(name, "evil_reg_tool"), { name: "package/../../evil-from-registry", content: "x" }]), { manifest: PLUGIN_MANIFEST });
    const w = await makeRelWorld(reg.url, { trustProject: true });
    try {
      const before = await w.snapshot();
      const r = await w.cli(["install", name, "--json"]);
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.json().error.code).toBe("ETARBALL_UNSAFE");
      expect(r.json().error.message).toContain("evil-from-registry");
      expect(r.stderr).not.toContain(POLLUTED_MARK);
      expect(await w.snapshot()).toEqual(before);
      ran++;
    } finally {
      await w.cleanup();
      await reg.dispose();
    }
  }, 120_000);

  it("install <name> whose served bytes differ from the integrity the registry recorded is EINTEGRITY, nothing changed", async () => {
    const { useGlobalRegistry } = await import("../helpers/global-registry.js");
    const { createHash } = await import("node:crypto");
    const reg = await useGlobalRegistry();
    const name = `swapped-reg-${Date.now().toString(36)}`;
    const other = createHash("sha512").update("some other bytes").digest("base64");
    await publishRaw(reg, name, tgzBytes(pluginEntries(name, "swapped_reg_tool")), { manifest: PLUGIN_MANIFEST, declaredIntegrity: `sha512-${other}` });
    const w = await makeRelWorld(reg.url, { trustProject: true });
    try {
      const before = await w.snapshot();
      const r = await w.cli(["install", name, "--json"]);
      expect(r.code, r.stdout + r.stderr).toBe(1); // a failure of the registry, not of the user's input
      expect(r.json().error.code).toBe("EINTEGRITY");
      expect(r.json().error.message).toContain(name);
      expect(await w.snapshot()).toEqual(before);
      ran++;
    } finally {
      await w.cleanup();
      await reg.dispose();
    }
  }, 120_000);
});
