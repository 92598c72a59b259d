/**
 * Benchmark fixtures: N npm plugins × M TypeScript tools installed in a temp xcsh root, exactly
 * as an npm install leaves them (`<xcshHome>/plugins/package.json` dependencies, and
 * `node_modules/<name>` with an `xcsh.tools` manifest), plus the same tools as pre-built
 * JavaScript in a separate tree: the floor a loader is measured against.
 *
 * Every tool imports a helper of its own plugin (`./shared.ts`) and `Type` from
 * `@sinclair/typebox` by bare name, as pi-style extensions do. `@sinclair/typebox` is linked
 * into both trees' node_modules (a plugin's peer dependency, installed once), so the plain
 * `import()` baselines resolve it; our loader hands tools the host's instance instead.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** The folder of the repository's own @sinclair/typebox. */
export function typeboxDir() {
  // The package does not export ./package.json: walk up from its main file instead.
  let dir = path.dirname(require.resolve("@sinclair/typebox"));
  while (path.basename(dir) !== "typebox" || path.basename(path.dirname(dir)) !== "@sinclair") {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("bench: cannot find the folder of @sinclair/typebox");
    dir = parent;
  }
  return dir;
}

function sharedTs(plugin) {
  return `export interface ToolText { text: string }
export function describeTool(name: string, plugin: string = ${JSON.stringify(plugin)}): string {
  return \`\${name} from \${plugin}\`;
}
export function reply(text: string): { content: { type: "text"; text: string }[] } {
  const body: ToolText = { text };
  return { content: [{ type: "text", text: body.text }] };
}
`;
}

function sharedJs(plugin) {
  return `export function describeTool(name, plugin = ${JSON.stringify(plugin)}) {
  return \`\${name} from \${plugin}\`;
}
export function reply(text) {
  const body = { text };
  return { content: [{ type: "text", text: body.text }] };
}
`;
}

function toolTs(name, sharedSpecifier) {
  return `import { Type, type Static } from "@sinclair/typebox";
import { describeTool, reply } from "${sharedSpecifier}";

const Params = Type.Object({ query: Type.String({ description: "what to look up" }), limit: Type.Optional(Type.Number()) });
type Params = Static<typeof Params>;

export default function factory(_api: unknown) {
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(name)},
    description: describeTool(${JSON.stringify(name)}),
    parameters: Params,
    async execute(_id: string, params: Params) {
      return reply(\`\${params.query} (\${params.limit ?? 10})\`);
    },
  };
}
`;
}

function toolJs(name) {
  return `import { Type } from "@sinclair/typebox";
import { describeTool, reply } from "./shared.js";

const Params = Type.Object({ query: Type.String({ description: "what to look up" }), limit: Type.Optional(Type.Number()) });

export default function factory(_api) {
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(name)},
    description: describeTool(${JSON.stringify(name)}),
    parameters: Params,
    async execute(_id, params) {
      return reply(\`\${params.query} (\${params.limit ?? 10})\`);
    },
  };
}
`;
}

function write(file, text) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function linkTypebox(nodeModules) {
  const target = path.join(nodeModules, "@sinclair", "typebox");
  mkdirSync(path.dirname(target), { recursive: true });
  symlinkSync(typeboxDir(), target, "dir");
}

/**
 * Write `plugins` plugins of `toolsPerPlugin` tools each under `root`:
 * `root/home/.xcsh` (the xcsh root), `root/project` (an empty cwd) and `root/floor` (pre-built JS).
 * Returns the roots and the files in load order: `tsFiles` (installed) and `jsFiles` (floor).
 */
export function writeBenchFixture(root, { plugins, toolsPerPlugin }) {
  const home = path.join(root, "home");
  const xcshHome = path.join(home, ".xcsh");
  const cwd = path.join(root, "project");
  const floor = path.join(root, "floor");
  const pluginsDir = path.join(xcshHome, "plugins");
  mkdirSync(cwd, { recursive: true });
  const dependencies = {};
  const tsFiles = [];
  const jsFiles = [];
  for (let p = 0; p < plugins; p++) {
    const name = `bench-plugin-${String(p).padStart(4, "0")}`;
    dependencies[name] = "^1.0.0";
    const tools = [];
    for (let t = 0; t < toolsPerPlugin; t++) tools.push(`tools/t${t}.ts`);
    const dir = path.join(pluginsDir, "node_modules", name);
    write(
      path.join(dir, "package.json"),
      `${JSON.stringify({ name, version: "1.0.0", type: "module", xcsh: { tools } }, null, 2)}\n`,
    );
    write(path.join(dir, "tools", "shared.ts"), sharedTs(name));
    const floorDir = path.join(floor, "node_modules", name);
    write(path.join(floorDir, "package.json"), `${JSON.stringify({ name, version: "1.0.0", type: "module" })}\n`);
    write(path.join(floorDir, "tools", "shared.js"), sharedJs(name));
    for (let t = 0; t < toolsPerPlugin; t++) {
      const toolName = `p${p}_t${t}`;
      const tsFile = path.join(dir, "tools", `t${t}.ts`);
      const jsFile = path.join(floorDir, "tools", `t${t}.js`);
      write(tsFile, toolTs(toolName, "./shared.ts"));
      write(jsFile, toolJs(toolName));
      tsFiles.push(tsFile);
      jsFiles.push(jsFile);
    }
  }
  write(path.join(pluginsDir, "package.json"), `${JSON.stringify({ name: "xcsh-plugins", private: true, dependencies }, null, 2)}\n`);
  linkTypebox(path.join(pluginsDir, "node_modules"));
  linkTypebox(path.join(floor, "node_modules"));
  return { root, home, xcshHome, cwd, floor, tsFiles, jsFiles };
}

/**
 * A seed-style tool (docs/contract.md, the seed's custom-tools page): one plain TypeScript module
 * with no import at all, which builds its schema with `api.typebox` (the host's TypeBox, handed
 * over by the loader) and only type annotations for TypeScript to strip.
 */
function seedToolTs(name) {
  return `interface Api { typebox: { Type: any }; cwd: string }
interface Params { query: string; limit?: number }

export default function factory(api: Api) {
  const { Type } = api.typebox;
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(name)},
    description: ${JSON.stringify(`${name} looks things up`)},
    parameters: Type.Object({ query: Type.String({ description: "what to look up" }), limit: Type.Optional(Type.Number()) }),
    async execute(_id: string, params: Params) {
      return { content: [{ type: "text" as const, text: \`\${params.query} (\${params.limit ?? 10}) in \${api.cwd}\` }] };
    },
  };
}
`;
}

/**
 * `tools` seed-style tools in one folder of plain modules, the user's tools folder
 * (`root/home/.xcsh/agent/tools/tNNNN.ts`), and the same modules as JavaScript
 * (`root/floor-seed/tNNNN.js`) for a runtime that cannot import TypeScript itself (Node 20).
 * Same return shape as `writeBenchFixture`.
 */
export function writeSeedFixture(root, { tools }) {
  const home = path.join(root, "home");
  const xcshHome = path.join(home, ".xcsh");
  const cwd = path.join(root, "project");
  const floor = path.join(root, "floor-seed");
  mkdirSync(cwd, { recursive: true });
  const tsFiles = [];
  const jsFiles = [];
  for (let t = 0; t < tools; t++) {
    const name = `s${t}`;
    const base = `t${String(t).padStart(4, "0")}`;
    const ts = seedToolTs(name);
    const tsFile = path.join(xcshHome, "agent", "tools", `${base}.ts`);
    const jsFile = path.join(floor, `${base}.js`);
    write(tsFile, ts);
    write(jsFile, stripSeedTypes(ts));
    tsFiles.push(tsFile);
    jsFiles.push(jsFile);
  }
  write(path.join(floor, "package.json"), `${JSON.stringify({ type: "module" })}\n`);
  return { root, home, xcshHome, cwd, floor, tsFiles, jsFiles };
}

/** The seed tool's JavaScript: its interfaces and annotations removed (it has no other TypeScript). */
function stripSeedTypes(ts) {
  return ts
    .replace(/^interface [^\n]*\n/gm, "")
    .replace("(api: Api)", "(api)")
    .replace("(_id: string, params: Params)", "(_id, params)")
    .replace(' as const', "");
}
