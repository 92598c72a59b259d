/**
 * The record of local marketplace folders is read like every JSON state file of ours
 * (manifest/json-file.ts): a UTF-8 BOM an editor left is tolerated, a document past the size of a
 * JSON file we read is refused as not a record (EREGISTRY_FILE), never parsed whole.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { xcshPaths } from "../../src/core/paths.js";
import { MAX_JSON_FILE_BYTES } from "../../src/manifest/json-file.js";
import { readFolderRecords } from "../../src/marketplace/local-folders.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";

let world: TmpWorld;
worldPerTest((w) => (world = w), "folder-records-", { trustProject: true });

function writeRecords(text: string): void {
  const ours = xcshPaths({ home: world.home, xcshHome: world.xcshHome }).ours;
  mkdirSync(ours, { recursive: true });
  writeFileSync(path.join(ours, "marketplace-folders.json"), text);
}

const roots = () => ({ roots: { home: world.home, xcshHome: world.xcshHome } }) as never;

describe("readFolderRecords", () => {
  it("reads a record written with a UTF-8 BOM", () => {
    const registries = { "/x/registry.json": { local: { realPath: "/x/local" } } };
    writeRecords(`\uFEFF${JSON.stringify({ version: 1, registries })}`);
    expect(readFolderRecords(roots()).registries).toEqual(registries);
  });

  it("refuses a record past the size of a JSON file we read, as not a record", () => {
    const registries = { "/x/registry.json": { local: { realPath: "/x/local" } } };
    writeRecords(JSON.stringify({ version: 1, registries, padding: "x".repeat(MAX_JSON_FILE_BYTES) }));
    expect(() => readFolderRecords(roots())).toThrow(expect.objectContaining({ code: "EREGISTRY_FILE" }));
  });
});
