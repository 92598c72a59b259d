/**
 * The bundler's configuration of the package's build (scripts/build.mjs), shared with the tests
 * that bundle one module of ours the same way (test/helpers/build-dist.ts `bundleForTest`). See
 * build.mjs for what each plugin is for.
 */
import { cpSync, mkdirSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
export const isBuiltin = (id) => builtins.has(id) || id.startsWith("node:");

/**
 * Required at load by npm's libraries, used only for work we never or rarely ask for: each
 * require of `id` (by the importer matching `importer`, when given) gets a stand-in of `kind`
 * (what the module exports) that evaluates the real module on first use. Loading a module costs
 * more than its bytes suggest on Node 22, whose compile cache keeps no module body (each is
 * compiled at evaluation): arborist's query selector alone pulls 33 modules of
 * postcss-selector-parser into every install.
 */
const LAZY = {
  sigstore: { kind: "object" },
  "@npmcli/run-script": { kind: "function" },
  // `Node#querySelectorAll` (npm query): @npmcli/query and postcss-selector-parser.
  "./query-selector-all.js": { kind: "function", importer: /[\\/]@npmcli[\\/]arborist[\\/]lib[\\/]node\.js$/ },
  // pacote's git fetcher (git specs) and its folder fetcher's file list (packing a folder).
  "@npmcli/git": { kind: "object", importer: /[\\/]pacote[\\/]lib[\\/]git\.js$/ },
  "npm-packlist": { kind: "function", importer: /[\\/]pacote[\\/]lib[\\/]dir\.js$/ },
};
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const LAZY_IDS = new RegExp(`^(${Object.keys(LAZY).map(escapeRegExp).join("|")})$`);
const UNBUNDLED_ONLY = /^.*\/\/ unbundled only\s*$/gm;
export const JITI_BABEL = "jiti-babel.cjs";

/** Our sources: drop the lines that only make sense unbundled. */
export const unbundledOnly = {
  name: "xcsh-tools:unbundled-only",
  transform(code, id) {
    if (!id.startsWith(path.join(repo, "src") + path.sep) || !code.includes("// unbundled only")) return null;
    return { code: code.replace(UNBUNDLED_ONLY, ""), map: null };
  },
};

/** The modules of `LAZY`, as required by npm's libraries: evaluated on first use. */
export const lazyRequires = {
  name: "xcsh-tools:lazy-requires",
  resolveId: {
    filter: { id: LAZY_IDS },
    async handler(id, importer, options) {
      if (importer === undefined || importer.startsWith("\0")) return null;
      if (LAZY[id].importer && !LAZY[id].importer.test(importer)) return null;
      const real = await this.resolve(id, importer, { ...options, skipSelf: true });
      return real ? `\0lazy:${id}:${real.id}` : null;
    },
  },
  load: {
    filter: { id: /^\0lazy:/ },
    handler(id) {
      const [, name, ...file] = id.split(":");
      const real = file.join(":");
      return `"use strict";
// ${name}: required by npm's libraries at load, evaluated here on first use (scripts/build.mjs).
let real;
const load = () => (real ??= require(${JSON.stringify(real)}));
module.exports = new Proxy(${LAZY[name].kind === "function" ? "() => undefined" : "{}"}, {
  apply: (_t, self, args) => Reflect.apply(load(), self, args),
  get: (_t, key) => Reflect.get(load(), key),
  has: (_t, key) => Reflect.has(load(), key),
  ownKeys: () => Reflect.ownKeys(load()),
  getOwnPropertyDescriptor: (_t, key) => {
    const d = Reflect.getOwnPropertyDescriptor(load(), key);
    return d && { ...d, configurable: true };
  },
});
`;
    },
  },
};

/**
 * @npmcli/agent requires the three proxy agents (and with them socks, ip-address, debug) at load,
 * for every request's agent, though it uses them only when a proxy is configured: its proxy module
 * is rewritten to require them on first use. Each replaced text must be found exactly once, so an
 * upgrade that changes the module fails the build instead of bundling it unchanged.
 */
const PROXY_MODULE = /[\\/]@npmcli[\\/]agent[\\/]lib[\\/]proxy\.js$/;
const PROXY_REWRITES = [
  [
    "const { HttpProxyAgent } = require('http-proxy-agent')\nconst { HttpsProxyAgent } = require('https-proxy-agent')\nconst { SocksProxyAgent } = require('socks-proxy-agent')\n",
    "// xcsh-tools (scripts/lib/bundle.mjs): the proxy agents are required on first use.\nlet proxyAgentClasses\nconst proxyAgents = () => (proxyAgentClasses ??= {\n  HttpProxyAgent: require('http-proxy-agent').HttpProxyAgent,\n  HttpsProxyAgent: require('https-proxy-agent').HttpsProxyAgent,\n  SocksProxyAgent: require('socks-proxy-agent').SocksProxyAgent,\n})\n",
  ],
  ["const SOCKS_PROTOCOLS = new Set(SocksProxyAgent.protocols)\n", "let socksProtocols\nconst SOCKS_PROTOCOLS = { has: (protocol) => (socksProtocols ??= new Set(proxyAgents().SocksProxyAgent.protocols)).has(protocol) }\n"],
  ["    return SocksProxyAgent\n", "    return proxyAgents().SocksProxyAgent\n"],
  ["    return [HttpProxyAgent, HttpsProxyAgent]\n", "    return [proxyAgents().HttpProxyAgent, proxyAgents().HttpsProxyAgent]\n"],
];
export const lazyProxyAgents = {
  name: "xcsh-tools:lazy-proxy-agents",
  transform: {
    filter: { id: PROXY_MODULE },
    handler(code, id) {
      let out = code;
      for (const [from, to] of PROXY_REWRITES) {
        if (out.split(from).length !== 2) throw new Error(`${id}: expected exactly one ${JSON.stringify(from)} (scripts/lib/bundle.mjs lazyProxyAgents): update the rewrite for this version of @npmcli/agent`);
        out = out.replace(from, to);
      }
      if (/\b(HttpProxyAgent|HttpsProxyAgent|SocksProxyAgent)\b(?!:)/.test(out.replace(/proxyAgents\(\)\.\w+|require\('[^']+'\)\.\w+/g, ""))) throw new Error(`${id}: a proxy agent is still used directly after the rewrite (scripts/lib/bundle.mjs lazyProxyAgents)`);
      // The stand-in set answers `has` only.
      if (out.split("SOCKS_PROTOCOLS").length - 1 !== out.split("SOCKS_PROTOCOLS.has(").length) throw new Error(`${id}: SOCKS_PROTOCOLS is used other than by \`has\` (scripts/lib/bundle.mjs lazyProxyAgents)`);
      return { code: out, map: null };
    },
  },
};

/**
 * node:fs taken without its ES facade. `import { … } from "node:fs"` in an ES module makes Node
 * build that module's facade, which reads every export once and so runs node:fs's lazy getters:
 * `promises` (fs/promises, which loads readline) and `ReadStream`/`WriteStream` (the streams),
 * about 3 ms of CPU in every process on Node 22 and 24 (a CommonJS `require` or
 * `process.getBuiltinModule`, Node >= 20.16 and Bun, reads only the names used). Each chunk's
 * import of node:fs becomes a destructuring of `process.getBuiltinModule("node:fs")` in its place.
 * Unlike an import's live binding, a `const` is readable only once its chunk's body has run: sound
 * because chunks import one another without a cycle (a chunk's body runs before any importer's
 * code can call into it), which generateBundle checks.
 */
const FS_IMPORT = /^import \{([^}]*)\} from "node:fs";$/gm;
export const fsWithoutFacade = {
  name: "xcsh-tools:fs-without-facade",
  renderChunk(code) {
    const out = code.replace(FS_IMPORT, (_, names) => `const {${names.replace(/\s+as\s+/g, ": ")}} = process.getBuiltinModule("node:fs");`);
    return out === code ? null : { code: out, map: null };
  },
  generateBundle(_options, output) {
    const chunks = Object.values(output).filter((item) => item.type === "chunk");
    const importsOf = new Map(chunks.map((chunk) => [chunk.fileName, chunk.imports]));
    const state = new Map();
    const visit = (file, trail) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") throw new Error(`scripts/lib/bundle.mjs fsWithoutFacade: the chunks import one another in a cycle (${[...trail, file].join(" -> ")}); node:fs taken as a const is unsound there`);
      state.set(file, "open");
      for (const next of importsOf.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, "done");
    };
    for (const chunk of chunks) visit(chunk.fileName, []);
  },
};

/**
 * A dynamic `import()` of a module placed in a hot chunk gets a facade chunk from rolldown: a file
 * that only re-exports bindings of the chunks that hold them (`export { a as b } from "./state.js"`,
 * even when the importer is that very chunk). Each is one more module for Node's ESM loader to
 * resolve, read, compile and link (about 0.35 ms of CPU each on Node 24; a `disable` loaded 18 of
 * them), and rolldown has no option that imports the holding chunk instead (preserveEntrySignatures
 * changes nothing here). So every `import("<facade>")` becomes the import of the chunks the facade
 * reads, in its order, answering an object whose getters read the same bindings (live, as the
 * facade's are). A facade with anything else in it (a side-effect import, `export *`, code) is left
 * as it is; the facade files stay in dist/ for static importers.
 */
const FACADE_LINE = /^(import|export) \{([^}]*)\}(?: from "(\.{1,2}\/[^"]+)")?;$/;
const IDENT = /^[A-Za-z_$][\w$]*$/;
const DYNAMIC_IMPORT = /\bimport\("(\.{1,2}\/[^"]+)"\)/g;

/**
 * The facade `code` as `{sources, bindings}`: the chunks it imports, in the order it names them (the
 * order Node evaluates them in), and [exported name, chunk file, name there] of each export; or
 * undefined when it is anything but re-exports.
 */
export function facadeBindings(fileName, code) {
  const locals = new Map();
  const sources = [];
  const bindings = [];
  for (const line of code.split("\n").filter((text) => text.trim() !== "")) {
    const match = FACADE_LINE.exec(line.trim());
    if (!match) return undefined;
    const [, keyword, list, from] = match;
    if (keyword === "import" && from === undefined) return undefined;
    const source = from === undefined ? undefined : path.posix.join(path.posix.dirname(fileName), from);
    if (source !== undefined && !sources.includes(source)) sources.push(source);
    for (const item of list.split(",").map((text) => text.trim()).filter(Boolean)) {
      const [name, alias = name] = item.split(/\s+as\s+/);
      if (!IDENT.test(name) || !IDENT.test(alias)) return undefined;
      if (keyword === "import") locals.set(alias, [source, name]);
      else if (source !== undefined) bindings.push([alias, source, name]);
      else if (locals.has(name)) bindings.push([alias, ...locals.get(name)]);
      else return undefined;
    }
  }
  return bindings.length > 0 ? { sources, bindings } : undefined;
}

export const importsPastFacades = {
  name: "xcsh-tools:imports-past-facades",
  generateBundle(_options, output) {
    const chunks = Object.values(output).filter((item) => item.type === "chunk");
    const facades = new Map();
    for (const chunk of chunks) {
      const facade = chunk.isEntry ? undefined : facadeBindings(chunk.fileName, chunk.code);
      if (facade) facades.set(chunk.fileName, facade);
    }
    for (const chunk of chunks) {
      const dir = path.posix.dirname(chunk.fileName);
      chunk.code = chunk.code.replace(DYNAMIC_IMPORT, (whole, spec) => {
        const facade = facades.get(path.posix.join(dir, spec));
        if (!facade) return whole;
        const { sources, bindings } = facade;
        const relative = (file) => {
          const rel = path.posix.relative(dir, file);
          return rel.startsWith(".") ? rel : `./${rel}`;
        };
        const getters = bindings.map(([alias, source, name]) => `get ${alias}() { return m${sources.indexOf(source)}.${name}; }`).join(", ");
        return sources.reduceRight((inner, source, i) => `import(${JSON.stringify(relative(source))}).then((m${i}) => ${inner})`, `({ ${getters} })`);
      });
    }
  },
};

/**
 * npm's libraries' chunk as a classic script run through V8's code cache (src/plugins/script-cache.ts
 * says why): the chunk's body becomes `<chunk>.script`, one function expression that takes the
 * chunk's imports as parameters and returns its exports, and the chunk itself a small ES module
 * that imports the same, runs the script through `runCachedScript` (which npm-libraries.ts
 * re-exports, so the chunk imports it) and exports what it returns. `import.meta.<prop>` and
 * `import("./chunk.js")` become the module's, handed in. Any other shape (a top-level statement
 * of another kind, a dynamic import of something else) fails the build rather than shipping a
 * script that cannot run.
 */
export const SCRIPT_CHUNK = "npm-libraries";
const IMPORT_LINE = /^import \{ ([^}]*) \} from "(\.\/[^"]+)";$/;
const EXPORT_LINE = /^export \{ ([^}]*) \};$/;
// `a as b` pairs of an import or export list.
const pairs = (list) => list.split(", ").map((spec) => spec.split(" as "));
export const npmLibrariesAsScript = {
  name: "xcsh-tools:npm-libraries-as-script",
  generateBundle(_options, output) {
    const chunk = Object.values(output).find((item) => item.type === "chunk" && item.name === SCRIPT_CHUNK);
    if (!chunk) return;
    const fail = (why) => { throw new Error(`scripts/lib/bundle.mjs npmLibrariesAsScript: ${chunk.fileName}: ${why}`); };
    const lines = chunk.code.replace(/\n+$/, "").split("\n");
    const imports = [];
    while (lines[0].startsWith("import ")) {
      const m = IMPORT_LINE.exec(lines.shift()) ?? fail("an import of another form than `import { … } from \"./chunk.js\";`");
      imports.push({ line: m[0], bindings: pairs(m[1]).map((pair) => pair.at(-1)) });
    }
    const exportLine = lines.pop();
    const exported = pairs((EXPORT_LINE.exec(exportLine) ?? fail("its last line is not `export { … };`"))[1]).map((pair) => ({ binding: pair[0], name: pair.at(-1) }));
    const imported = imports.flatMap((i) => i.bindings);
    const runner = exported.find((e) => e.name === "runCachedScript")?.binding;
    if (!runner || !imported.includes(runner)) fail("it does not import runCachedScript (src/plugins/npm-libraries.ts re-exports it)");
    const own = exported.map((e) => e.binding).filter((binding) => !imported.includes(binding));
    // script-cache.ts keeps which exports a cached run used as one byte's bits.
    if (own.length > 8) fail(`${own.length} exports of its own; the code cache records at most 8 (src/plugins/script-cache.ts \`used\`)`);
    let body = lines.join("\n");
    if (/^(import|export)\b/m.test(body)) fail("an import or export statement inside the chunk");
    body = body.replace(/\bimport\.meta\.(dirname|filename|url)\b/g, "__xcshMeta.$1").replace(/\bimport\("(\.\/[^"]+\.js)"\)/g, (_, spec) => `__xcshImport(${JSON.stringify(spec)})`);
    if (/\bimport\.meta\b/.test(body)) fail("import.meta other than .dirname, .filename or .url");
    if (/\bimport\s*\(/.test(body)) fail("a dynamic import other than of a chunk");
    const scriptFile = `${chunk.fileName}.script`.replace(/\.js\.script$/, ".script");
    this.emitFile({ type: "asset", fileName: scriptFile, source: `(function (__xcshMeta, __xcshImport, ${imported.join(", ")}) {\n${body}\nreturn { ${own.join(", ")} };\n})` });
    chunk.code = `${imports.map((i) => i.line).join("\n")}
// npm's libraries, compiled through V8's code cache (scripts/lib/bundle.mjs npmLibrariesAsScript).
const { ${own.join(", ")} } = ${runner}(new URL(${JSON.stringify(`./${path.posix.basename(scriptFile)}`)}, import.meta.url), [import.meta, (spec) => import(new URL(spec, import.meta.url).href), ${imported.join(", ")}]);
${exportLine}
`;
  },
};

/** jiti's Babel transform stays one file beside the chunks, required on jiti's first transform. */
export const jitiBabel = {
  name: "xcsh-tools:jiti-babel",
  resolveId: {
    filter: { id: /babel\.cjs$/ },
    handler(id, importer) {
      if (importer && /[\\/]node_modules[\\/]jiti[\\/]/.test(importer)) return { id: `../vendor/${JITI_BABEL}`, external: true };
      return null;
    },
  },
};

/**
 * The modules a host's boot and `tools --json` (the host's query at boot) load, as three chunks
 * (what both load, the boot's own, the query's own) instead of one per shared module: Bun pays for
 * every module file it loads, and Node's ESM loader about 0.2 ms of resolving and linking per
 * file. The same for a scan and for the state commands. A module named here that another command
 * imports is loaded with its chunk there.
 */
const HOT_CHUNKS = {
  // The organization policy filter, the module records, and what discovery's scan reads with (the
  // JSON reader, the result helpers, the state places) too: the boot reads them, and elsewhere they
  // pull the query's chunk, CLI and all, into every host boot (host-boot-footprint.test.ts).
  "boot-index": ["boot/fingerprint", "boot/format", "boot/module-records", "boot/policy-filter", "boot/store", "boot/views", "boot/world", "core/bounded-read", "core/contain", "core/errors", "core/failure", "core/host-options", "core/json-position", "core/paths", "core/policy-file", "core/state-places", "core/trust", "discovery/select", "host/module-key", "host/tool-claims", "manifest/json-file", "manifest/result"],
  "boot-load": ["boot/discover", "boot/discover-and-load", "discovery/index", "discovery/records", "host/exec", "host/host-exports", "host/import/bun", "host/import/module-map", "host/import/module-names", "host/import/strategy", "host/loader", "host/module-import", "host/render", "host/session", "host/timeout", "host/tool-shape"],
  query: ["boot/installed-tools", "boot/simulate", "cli/command-errors", "cli/command-name", "cli/commands/index", "cli/commands/tools", "cli/context", "cli/output", "cli/program", "cli/project-trust", "cli/render-error", "components/installed-roots", "core/redact", "host/builtins"],
  // Libraries loaded whole by the hot paths, each as one chunk rather than the pieces rolldown
  // splits by importer (TypeBox came as five files), and named before the groups below so that
  // those do not take them in (a group takes the dependencies of its modules that no earlier group
  // took: the boot, which hands tools TypeBox, must not load the scan's chunk for it).
  typebox: { packages: ["@sinclair/typebox"] },
  "npm-grammar": { packages: ["semver", "npm-package-arg", "hosted-git-info", "lru-cache", "proc-log", "validate-npm-package-name"] },
  // What runs npm's libraries' chunk as a script (npmLibrariesAsScript): a file of its own, outside that script.
  "script-cache": ["plugins/script-cache"],
  // What scanning a view needs beyond the boot's chunks (a refresh after a change, a stale boot):
  // discovery's providers and the manifests they read, and the writer of the index.
  scan: [
    "boot/inputs", "core/atomic-fs", "core/npm-spec", "core/source-args", "discovery/state-file", "discovery/tools-dir", "discovery/untrusted",
    "discovery/providers/claude", "discovery/providers/claude-plugins", "discovery/providers/codex", "discovery/providers/config", "discovery/providers/directory-provider",
    "discovery/providers/index", "discovery/providers/marketplace-registry", "discovery/providers/native", "discovery/providers/npm", "discovery/providers/xcsh-plugins",
    "manifest/claude-settings", "manifest/installed-plugins", "manifest/names", "manifest/plugin-manifest", "manifest/plugins-package", "manifest/runtime-lock",
    "manifest/schema-check", "manifest/typebox", "manifest/unknown-keys",
  ],
  // The state commands (enable, disable, features, config set|delete, trust; issue 44): the
  // command, our settings, the state and its planners, the lock and the journal, in one file
  // instead of about thirty.
  state: [
    "cli/commands/config", "cli/commands/enable", "cli/commands/features", "cli/commands/trust", "cli/plugin-command", "cli/plugin-world", "cli/project-scope", "cli/seeded", "cli/state-command",
    // Whether git could find a repository (node built-ins only): core/git.ts and the restore's host
    // files both ask it, so it sits where both find it loaded, not in the `seed` group.
    "core/git-discovery",
    "core/config", "core/journal", "core/lock", "core/policy", "core/settings-check", "core/settings-files", "core/settings-keys", "core/suggest",
    "manifest/plugin-overrides", "plugins/features", "plugins/inventory", "plugins/mutation", "plugins/plugin-settings", "plugins/project-overrides", "plugins/spec", "plugins/state",
    "plugins/state-change", "plugins/turned-on",
    // Imported by state-change.ts (plan.ts, which imports the other two): in this chunk either way.
    "plugins/plan", "plugins/tree-rebase", "plugins/work-copy",
  ],
  // The restore stamp that `install` with nothing to do answers from (teamset/fast.ts), in one
  // file; listed before `seed` so that group, which imports it, does not take it in.
  "restore-stamp": ["teamset/fast", "teamset/stamp"],
  // Where the marketplace engine keeps its registry, which the host files of a restore also write:
  // one file of its own, before `seed`, so that the marketplace commands do not load that group.
  "marketplace-registry": ["marketplace/context", "marketplace/registry", "manifest/marketplaces-registry"],
  // The seed-satisfied restore (teamset/fast-seed.ts, issue 43): the set, the lock and the seed
  // read and checked, the host files rendered and written, the report printed, in one file
  // instead of about fifteen; the restore engine reads the same formats with the same modules.
  seed: [
    "teamset/fast-seed", "teamset/canonical-json", "teamset/host-files", "teamset/host-write", "teamset/load", "teamset/lock-format", "teamset/satisfy", "teamset/seed", "teamset/set",
    "teamset/stamp-write", "manifest/claude-team-settings", "manifest/seed", "manifest/team-declaration", "manifest/team-file", "manifest/team-local", "manifest/team-lock",
    "marketplace/tree", "cli/restore-output", "validate/host-differences",
  ],
};
const hotChunks = Object.entries(HOT_CHUNKS).map(([name, modules]) => {
  if (!Array.isArray(modules)) {
    const prefixes = modules.packages.map((p) => path.join(repo, "node_modules", p) + path.sep);
    return { name, test: (id) => prefixes.some((prefix) => id.startsWith(prefix)) };
  }
  const files = new Set(modules.map((m) => path.join(repo, "src", `${m}.ts`)));
  return { name, test: (id) => files.has(id) };
});

/**
 * Bundle `input` (name → file) into `dir` as ESM with shared chunks, Node built-ins outside, and
 * copy beside it the files bundled libraries read by path; `plugins` run before ours. Returns
 * rolldown's output.
 */
export async function bundle({ input, dir, plugins = [] }) {
  const { output } = await build({
    input,
    platform: "node",
    logLevel: "warn",
    // A module placed in a hot chunk on purpose is loaded with that chunk, whoever imports it and
    // how: rolldown's note that a dynamic import of it cannot move it elsewhere says nothing new.
    onLog(level, log, handler) {
      if (log.code === "INEFFECTIVE_DYNAMIC_IMPORT" && hotChunks.some((chunk) => chunk.test(log.id))) return;
      handler(level, log);
    },
    cwd: repo,
    resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
    external: (id) => isBuiltin(id),
    plugins: [...plugins, unbundledOnly, lazyRequires, lazyProxyAgents, jitiBabel, fsWithoutFacade, importsPastFacades, npmLibrariesAsScript],
    output: {
      dir,
      format: "esm",
      entryFileNames: "[name].js",
      chunkFileNames: "chunks/[name]-[hash].js",
      charset: "ascii",
      codeSplitting: { groups: hotChunks },
      comments: { legal: true, annotation: false, jsdoc: false },
    },
  });
  // The files bundled libraries read by path at run time, where their paths point from dir/chunks/.
  const requireFromRepo = createRequire(path.join(repo, "package.json"));
  mkdirSync(path.join(dir, "vendor"), { recursive: true });
  cpSync(path.join(path.dirname(requireFromRepo.resolve("jiti")), "..", "dist", "babel.cjs"), path.join(dir, "vendor", JITI_BABEL));
  cpSync(path.join(path.dirname(requireFromRepo.resolve("@npmcli/run-script")), "node-gyp-bin"), path.join(dir, "lib", "node-gyp-bin"), { recursive: true });
  return output;
}
