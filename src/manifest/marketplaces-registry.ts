/**
 * `~/.xcsh/marketplaces.json` version 1: the marketplaces a user added.
 * The host treats a bad file as empty and overwrites it on the next write, losing every entry;
 * we read it strictly and say what is wrong instead.
 */
import path from "node:path";
import { Type, type Static } from "./typebox.js";
import { gitRefProblem, githubRepoProblem, gitUrlProblem, type SourceArgProblem } from "../core/source-args.js";
import { nameSegmentProblem } from "./names.js";
import { IssueCollector, isRecord, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { unknownKeyWarnings } from "./unknown-keys.js";

export const MarketplaceSourceTypeSchema = Type.Union([Type.Literal("github"), Type.Literal("git"), Type.Literal("url"), Type.Literal("local")]);
export type MarketplaceSourceType = Static<typeof MarketplaceSourceTypeSchema>;

export const MarketplaceEntrySchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  sourceType: MarketplaceSourceTypeSchema,
  sourceUri: Type.String({ minLength: 1 }),
  catalogPath: Type.String({ minLength: 1 }),
  addedAt: Type.String(),
  updatedAt: Type.String(),
  /** The commit a git marketplace's cache holds: the `gitCommitSha` of its in-repo plugins (as Claude Code records it). */
  commitSha: Type.Optional(Type.String({ pattern: "^[0-9a-f]{40}([0-9a-f]{24})?$" })),
});
export type MarketplaceEntry = Static<typeof MarketplaceEntrySchema>;

export const MarketplacesRegistrySchema = Type.Object({
  version: Type.Literal(1),
  marketplaces: Type.Array(MarketplaceEntrySchema),
});
export type MarketplacesRegistry = Static<typeof MarketplacesRegistrySchema>;

const ENTRY_KEYS = Object.keys(MarketplaceEntrySchema.properties);

/**
 * The recorded source of a git or GitHub marketplace, as `marketplace update` will hand it to git:
 * by the rules of core/source-args.ts (checked again before the call). A local URL is fine here:
 * the user typed it when adding the marketplace.
 */
function sourceUriProblem(entry: MarketplaceEntry): SourceArgProblem | undefined {
  if (entry.sourceType !== "git" && entry.sourceType !== "github") return undefined;
  const hash = entry.sourceUri.lastIndexOf("#");
  const url = hash > 0 ? entry.sourceUri.slice(0, hash) : entry.sourceUri;
  const ref = hash > 0 ? entry.sourceUri.slice(hash + 1) : undefined;
  return (entry.sourceType === "git" ? gitUrlProblem(url, { allowLocal: true }) : githubRepoProblem(url)) ?? (ref !== undefined ? gitRefProblem(ref) : undefined);
}

/** Strict check: shape, names, unique names, absolute catalog paths, git sources. */
export function validateMarketplacesRegistry(value: unknown): ValidationResult<MarketplacesRegistry> {
  const out = new IssueCollector();
  if (isRecord(value) && typeof value.version === "number" && value.version !== 1) {
    out.error({ path: "/version", code: "EFORMAT_VERSION", message: `/version: expected 1, found ${value.version}`, expected: "1", found: String(value.version), hint: "This file was written by an incompatible version; move it away and add the marketplaces again." });
    return out.result(value as MarketplacesRegistry);
  }
  const shape = checkSchema(MarketplacesRegistrySchema, value);
  out.absorb(shape);
  if (!shape.ok) return out.result(value as MarketplacesRegistry);
  const seen = new Map<string, number>();
  shape.value.marketplaces.forEach((entry, i) => {
    const at = pointer("", "marketplaces", i);
    out.warnings.push(...unknownKeyWarnings(entry as Record<string, unknown>, ENTRY_KEYS, at, { onlyTypos: true }));
    const problem = nameSegmentProblem(entry.name);
    if (problem) out.error({ path: pointer(at, "name"), code: "EMARKETPLACE_NAME", message: `${pointer(at, "name")}: marketplace name "${entry.name}" is invalid: ${problem}`, found: JSON.stringify(entry.name), hint: "Remove the marketplace and add it again." });
    const first = seen.get(entry.name);
    if (first !== undefined) out.error({ path: pointer(at, "name"), code: "EDUPLICATE_MARKETPLACE", message: `${pointer(at, "name")}: "${entry.name}" is already registered at /marketplaces/${first}`, hint: "Remove one of the two entries." });
    else seen.set(entry.name, i);
    const source = sourceUriProblem(entry);
    if (source) out.error({ path: pointer(at, "sourceUri"), code: source.code, message: `${pointer(at, "sourceUri")}: ${source.problem}`, found: JSON.stringify(entry.sourceUri), hint: "This entry was not written by xcsh-tools: delete it from the file, then add the marketplace again from a valid source." });
    if (!path.isAbsolute(entry.catalogPath)) out.error({ path: pointer(at, "catalogPath"), code: "EINSTALL_PATH", message: `${pointer(at, "catalogPath")}: must be an absolute path`, found: JSON.stringify(entry.catalogPath), hint: "Run `xcsh-tools marketplace update` to rewrite it." });
  });
  return out.result(shape.value);
}
