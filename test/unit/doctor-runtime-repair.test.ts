/**
 * The pure repair of the runtime lock and the install record (src/doctor/runtime-repair.ts):
 * what doctor reports as drift and what `--fix` writes are the same function's output.
 */
import { describe, expect, it } from "vitest";
import { repairRuntimeState } from "../../src/doctor/runtime-repair.js";
import type { InstalledPlugin } from "../../src/plugins/inventory.js";
import type { StateFiles } from "../../src/plugins/state.js";

function plugin(name: string, version: string | undefined, features: string[] = [], extra: Partial<InstalledPlugin> = {}): InstalledPlugin {
  return {
    name,
    dependency: "^1.0.0",
    dir: `/p/node_modules/${name}`,
    version,
    linked: false,
    linkTarget: undefined,
    pkg: { name, version },
    manifest: { tools: "./t.js", features: Object.fromEntries(features.map((f) => [f, { description: f }])) },
    runtime: undefined,
    record: undefined,
    scripts: [],
    problem: undefined,
    ...extra,
  };
}

const record = { spec: "a", source: "registry" as const, scripts: [], installedAt: "2026-01-01T00:00:00.000Z" };

describe("repairRuntimeState", () => {
  it("leaves a consistent state alone", () => {
    const files: StateFiles = {
      packageJson: { name: "xcsh-plugins", private: true, dependencies: { a: "^1.0.0" } },
      runtimeLock: { plugins: { a: { version: "1.0.0", enabledFeatures: null, enabled: false } }, settings: { a: { k: 1 } } },
      record: { version: 1, plugins: { a: record } },
    };
    const { after, changes } = repairRuntimeState(files, [plugin("a", "1.0.0")]);
    expect(changes).toEqual([]);
    expect(after).toEqual(files);
  });

  it("drops orphans, adds missing entries with defaults, follows the installed version, drops undeclared features", () => {
    const files: StateFiles = {
      packageJson: { name: "xcsh-plugins", private: true, dependencies: { a: "^1.0.0", b: "^1.0.0", c: "^1.0.0", gone: "^1.0.0" } },
      runtimeLock: {
        plugins: { a: { version: "0.9.0", enabledFeatures: ["web", "old", "*"], enabled: false }, ghost: { version: "1.0.0" } },
        settings: { a: { k: 1 }, ghost: { token: "x" }, lonely: { x: 1 } },
        extraKey: true,
      } as StateFiles["runtimeLock"],
      record: { version: 1, plugins: { a: record, ghost: record } },
    };
    const inventory = [plugin("a", "1.0.0", ["web"]), plugin("b", "2.0.0"), plugin("c", undefined, [], { pkg: undefined, manifest: undefined, problem: "missing" })];
    const { after, changes } = repairRuntimeState(files, inventory);
    expect(changes.map((c) => c.id).sort()).toEqual(["orphan:record:ghost", "orphan:runtime:ghost", "orphan:settings:ghost", "orphan:settings:lonely", "plugin:a:feature:old", "plugin:a:runtime", "plugin:b:runtime"].sort());
    expect(after.runtimeLock).toEqual({
      plugins: { a: { version: "1.0.0", enabledFeatures: ["web", "*"], enabled: false }, b: { version: "2.0.0", enabledFeatures: null, enabled: true } },
      settings: { a: { k: 1 } },
      extraKey: true,
    });
    expect(after.record.plugins).toEqual({ a: record });
    expect(after.packageJson).toBe(files.packageJson);
  });
});
