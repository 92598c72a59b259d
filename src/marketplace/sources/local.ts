/**
 * Local marketplaces: a folder (`./x`, `../x`, `~/x`, an absolute path). Only the catalog is
 * cached; relative plugin sources resolve in the live folder, as in Claude Code's `directory`
 * source. Because the catalog is a snapshot and the folder is live, installs
 * compare the live catalog with the snapshot first and ask for `marketplace update` when they
 * differ, so the installed content always matches the catalog that was shown.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { XcshToolsError } from "../../core/errors.js";
import { expandTilde } from "../../core/paths.js";
import { readCatalogIn } from "../catalog.js";
import type { CatalogSource } from "./types.js";

export const localSource: CatalogSource = {
  kind: "local",
  parse(input, world) {
    const isPath = input === "." || input === ".." || /^\.\.?[/\\]/.test(input) || input === "~" || /^~[/\\]/.test(input) || path.isAbsolute(input) || /^[A-Za-z]:[/\\]/.test(input);
    if (!isPath) return undefined;
    return { kind: "local", uri: path.resolve(world.typedFrom ?? world.cwd, expandTilde(input, world.roots.home)) };
  },
  async fetch(spec) {
    const info = await stat(spec.uri).catch(() => undefined);
    if (!info?.isDirectory()) {
      throw new XcshToolsError("ESOURCE_NOT_FOUND", `The marketplace folder ${spec.uri} does not exist`, {
        file: spec.uri,
        hint: "Check the path, or remove the marketplace if the folder is gone for good.",
      });
    }
    return { loaded: await readCatalogIn(spec.uri, `The folder ${spec.uri}`, { allowLocal: true }) };
  },
};
