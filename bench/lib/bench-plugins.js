/**
 * The npm plugins the install and team benchmarks publish to their local Verdaccio, in two
 * shapes: `shared` (every plugin depends on one shared library: COUNT + 1 packages, arborist meets
 * that dependency once) and `own` (each also depends on a library of its own: 2 × COUNT + 1), as
 * plugins with dependencies of their own do. Every plugin has one tool that imports its libraries.
 */
import path from "node:path";

export const SHAPE_NAMES = ["shared", "own"];

/** What a shape's line says about its packages. */
export function shapeDescription(shape, count) {
  return shape === "shared" ? `each depending on one shared library (${count + 1} packages)` : `each depending on a library of its own and the shared one (${2 * count + 1} packages)`;
}

/**
 * Publish the shared library under `prefix`, then a function that publishes `count` plugins of a
 * shape and resolves to their names.
 */
export async function benchPublisher(registry, prefix, count) {
  const library = (name) => registry.publish({ name, version: "1.0.0", files: { "index.js": "module.exports = { greet: (n) => `hello ${n}` };\n" } });
  await library(`${prefix}-shared`);
  return async (shape) => {
    if (!SHAPE_NAMES.includes(shape)) throw new Error(`bench: unknown shape ${shape} (${SHAPE_NAMES.join(", ")})`);
    const names = [];
    for (let i = 0; i < count; i++) {
      const name = `${prefix}-${shape}-plugin-${i}`;
      const dependencies = { [`${prefix}-shared`]: "^1.0.0" };
      let imports = `import shared from "${prefix}-shared";\n`;
      if (shape === "own") {
        await library(`${prefix}-own-lib-${i}`);
        dependencies[`${prefix}-own-lib-${i}`] = "^1.0.0";
        imports += `import own from "${prefix}-own-lib-${i}";\nvoid own;\n`;
      }
      const tool = `${imports}export default (api) => ({ name: "bench_tool_${i}", label: "Bench ${i}", description: shared.greet("${i}"), parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`;
      await registry.publish({ name, version: "1.0.0", packageJson: { type: "module", dependencies, xcsh: { tools: "./tools/index.js" } }, files: { "tools/index.js": tool, "README.md": `# ${name}\n`.repeat(50) } });
      names.push(name);
    }
    return names;
  };
}

/** The environment of a benchmark's npm or xcsh-tools process: its own home, `.npmrc` and npm cache. */
export function benchEnv(home, cache) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    npm_config_userconfig: path.join(home, ".npmrc"),
    npm_config_globalconfig: path.join(home, ".npmrc-global"),
    npm_config_cache: cache,
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    NO_COLOR: "1",
  };
}

/** The median of `xs`. */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
