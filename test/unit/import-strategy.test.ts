import { describe, expect, it } from "vitest";
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
