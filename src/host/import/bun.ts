/**
 * The Bun strategy: Bun runs TypeScript natively, so a tool is a plain `import()`. Bare names of
 * the module map become Bun runtime plugin virtual modules (`build.module(name, …)` with the
 * `object` loader), which apply to every later dynamic import in the process. Each name is
 * registered once per process.
 */
import { getModuleRegistry } from "./module-map.js";

interface BunPluginBuilder {
  module(specifier: string, callback: () => { exports: Record<string, unknown>; loader: "object" }): void;
}
interface BunGlobal {
  plugin(plugin: { name: string; setup(builder: BunPluginBuilder): void }): unknown;
}

const registered = new Set<string>();

/** Register a Bun virtual module for every registry name not registered yet. */
export function registerBunModules(): void {
  const bun = (globalThis as unknown as { Bun?: BunGlobal }).Bun;
  const registry = getModuleRegistry();
  // Called before every import: nothing to do unless the registry grew (it only grows).
  if (!bun || registry.size === registered.size) return;
  for (const [name, namespace] of registry) {
    if (registered.has(name)) continue;
    registered.add(name);
    bun.plugin({
      name: `xcsh-tools:${name}`,
      setup(builder) {
        builder.module(name, () => ({ exports: toExports(namespace), loader: "object" }));
      },
    });
  }
}

/** Bun's object loader wants a plain record; keep `default` so default imports work too. */
function toExports(namespace: object): Record<string, unknown> {
  const exports: Record<string, unknown> = { ...(namespace as Record<string, unknown>) };
  if (!("default" in exports)) exports.default = namespace;
  return exports;
}
