import { describe, expect, it } from "vitest";
import { mayImportWithJiti } from "../../src/host/import/strategy.js";
import { selectImportStrategy } from "../../src/host/module-import.js";

const node20 = { bun: false, stripsTypes: false };
const node22 = { bun: false, stripsTypes: true };
const bun = { bun: true, stripsTypes: false };

describe("selectImportStrategy", () => {
  it.each([
    ["/t/a.ts", node20, "jiti"],
    ["/t/a.mts", node20, "jiti"],
    ["/t/a.js", node20, "node-native"],
    ["/t/a.mjs", node20, "node-native"],
    ["/t/a.ts", node22, "node-native"],
    ["/p/node_modules/x/a.ts", node22, "jiti"],
    ["/t/a.js", node22, "node-native"],
    ["/t/a.ts", bun, "bun"],
    ["/t/a.mjs", bun, "bun"],
  ] as const)("%s on %j → %s", (file, runtime, expected) => {
    expect(selectImportStrategy(file, runtime)).toBe(expected);
  });
});

describe("mayImportWithJiti: whether the tools of a manifest entry may need jiti (the install loads it ahead only then)", () => {
  it.each([
    // JavaScript files never do.
    ["node_modules/p/tools/a.js", node20, false],
    ["node_modules/p/tools/a.mjs", node22, false],
    ["node_modules/p/tools/a.CJS", node20, false],
    // TypeScript does where Node cannot strip it: Node 20, and anything under node_modules.
    ["node_modules/p/tools/a.ts", node20, true],
    ["node_modules/p/tools/a.MTS", node22, true],
    ["/home/u/tools/a.ts", node22, false],
    ["/home/u/tools/a.cts", node20, true],
    // A folder (or a name with no module extension) may hold TypeScript.
    ["node_modules/p/tools", node20, true],
    ["node_modules/p/tools/v1.2", node22, true],
    // Bun imports everything itself.
    ["node_modules/p/tools/a.ts", bun, false],
    ["node_modules/p/tools", bun, false],
  ] as const)("%s on %j → %s", (entry, runtime, expected) => {
    expect(mayImportWithJiti(entry, runtime)).toBe(expected);
  });
});
