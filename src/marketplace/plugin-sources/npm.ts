/**
 * `{source: "npm", package, version?, registry?}`: a plugin published as an npm package, fetched
 * with pacote (npm's own fetcher) using the user's `.npmrc` options (registry, scoped registries,
 * auth), the entry's `registry` taking precedence. Extracting runs no lifecycle script. The host
 * documented this kind but threw.
 */
import path from "node:path";
import type { Static } from "../../manifest/typebox.js";
import { XcshToolsError, errorMessage } from "../../core/errors.js";
import { codedFailure } from "../../core/failure.js";
import type { NpmSourceSchema } from "../../manifest/marketplace-catalog.js";
import { npmVersionProblem, registryUrlProblem } from "../../core/source-args.js";
import { npmNameProblem } from "../../manifest/names.js";
import { loadPacote } from "../../plugins/npm-client.js";
import { assertEntryArg } from "./git-common.js";
import type { PluginSourceInput, PluginSourceKind, PluginWorld } from "./types.js";

type NpmSource = Static<typeof NpmSourceSchema>;

/** The entry's values, checked again right before pacote sees them (catalog validation did first). */
function checked(input: PluginSourceInput): NpmSource {
  const s = input.entry.source as NpmSource;
  const nameProblem = typeof s.package === "string" ? npmNameProblem(s.package) : "it is not a string";
  if (nameProblem) assertEntryArg(input, "package", { code: "EPACKAGE_NAME", problem: `${JSON.stringify(s.package)} is not an npm package name: ${nameProblem}` });
  if (s.version !== undefined) assertEntryArg(input, "version", npmVersionProblem(s.version));
  if (s.registry !== undefined) assertEntryArg(input, "registry", registryUrlProblem(s.registry));
  return s;
}

/** The integrity a team lock pinned on the entry (not a catalog field: prepare.ts `pinnedEntry` adds it). */
function pinnedIntegrity(input: PluginSourceInput): string | undefined {
  const value = (input.entry.source as { integrity?: unknown }).integrity;
  return typeof value === "string" ? value : undefined;
}

function specOf(s: NpmSource): string {
  return `${s.package}@${s.version ?? "latest"}`;
}

function optionsOf(s: NpmSource, world: PluginWorld): Record<string, unknown> {
  const base = { ...(world.npmOptions ?? {}) };
  if (s.registry) {
    base.registry = s.registry;
    // A scoped registry in .npmrc would win over `registry` for a scoped package: the entry says otherwise.
    const scope = s.package.startsWith("@") ? s.package.split("/")[0] : undefined;
    if (scope) base[`${scope}:registry`] = s.registry;
  }
  // A marketplace plugin is extracted, never installed: no npm script of it runs, whatever the settings say.
  return { ...base, ignoreScripts: true, ...(world.signal ? { signal: world.signal } : {}) };
}

function npmError(s: NpmSource, error: unknown): XcshToolsError {
  // A refused tarball (tarball-check.ts), a full disk or a refused permission says so (core/failure.ts).
  const machine = codedFailure(error, { what: `npm package ${specOf(s)}` });
  if (machine) return machine;
  const code = (error as { code?: string }).code;
  if (code === "EINTEGRITY") {
    return new XcshToolsError("EINTEGRITY", `npm package ${specOf(s)}: the registry sent other bytes than the integrity pinned for it (${errorMessage(error)})`, { hint: "Nothing was installed. The package was republished or swapped behind the lock: run `xcsh-tools update --scope project` if the change is wanted.", cause: error });
  }
  const notFound = code === "E404" || code === "ETARGET";
  return new XcshToolsError(notFound ? "ESOURCE_NOT_FOUND" : "ENPM_FETCH", `Cannot fetch npm package ${specOf(s)}: ${errorMessage(error)}`, {
    hint: notFound ? "The package or version is not on the registry: check the catalog entry and the registry (.npmrc)." : "Check the registry URL and your .npmrc auth, then retry.",
    cause: error,
  });
}

export const npmPluginSource: PluginSourceKind = {
  kind: "npm",
  async fetch(input, scratch, world) {
    const s = checked(input);
    const pacote = await loadPacote();
    const dir = path.join(scratch, "package");
    try {
      const options = optionsOf(s, world);
      const manifest = await pacote.manifest(specOf(s), options);
      // Extract exactly the version the manifest resolved, by integrity: a team lock's (pinnedEntry
      // in prepare.ts), else the registry's; pacote refuses other bytes (EINTEGRITY).
      const integrity = pinnedIntegrity(input) ?? manifest._integrity;
      await pacote.extract(`${s.package}@${manifest.version}`, dir, { ...options, ...(integrity ? { integrity } : {}) });
      return { dir, within: dir, version: manifest.version, ...(integrity ? { integrity } : {}) };
    } catch (error) {
      throw npmError(s, error);
    }
  },
  async probe(input, world) {
    const s = checked(input);
    const pacote = await loadPacote();
    try {
      const manifest = await pacote.manifest(specOf(s), optionsOf(s, world));
      return { version: manifest.version };
    } catch (error) {
      throw npmError(s, error);
    }
  },
};
