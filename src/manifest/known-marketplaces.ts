/**
 * Claude Code's `~/.claude/plugins/known_marketplaces.json`: `{<name>: {source, installLocation,
 * lastUpdated, autoUpdate?}}` with `source` one of `{source: "github", repo}`, `{source: "git",
 * url}`, `{source: "directory", path}`. Read only; every unknown key is kept and
 * an unknown source kind is a warning (Claude adds kinds), not an error.
 */
import { gitRefProblem, githubRepoProblem, gitUrlProblem, sourceArgHint, type SourceArgProblem } from "../core/source-args.js";
import { Type, type Static } from "./typebox.js";
import { IssueCollector, describeValue, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { unknownKeyWarnings } from "./unknown-keys.js";

export const KnownMarketplaceSchema = Type.Object({
  source: Type.Object({ source: Type.String() }),
  installLocation: Type.String({ minLength: 1 }),
  lastUpdated: Type.Optional(Type.String()),
  autoUpdate: Type.Optional(Type.Boolean()),
});
export type KnownMarketplace = Static<typeof KnownMarketplaceSchema>;

export const KnownMarketplacesSchema = Type.Record(Type.String(), KnownMarketplaceSchema);
export type KnownMarketplaces = Static<typeof KnownMarketplacesSchema>;

const SOURCE_FIELDS: Record<string, string[]> = { github: ["repo"], git: ["url"], url: ["url"], directory: ["path"], file: ["path"] };

/**
 * What is wrong with a Claude source as git would see it: option-shaped values, remote helpers
 * (`ext::`, `fd::`), refs outside `git check-ref-format`, names GitHub would not give. A local git
 * URL (`file://`, a path) is accepted: the file lives on the user's disk, written by their own
 * Claude Code, like the `directory` records that name local folders.
 */
export function claudeSourceProblem(source: Record<string, unknown>): SourceArgProblem | undefined {
  const ref = source.ref !== undefined && source.ref !== "" ? gitRefProblem(source.ref) : undefined;
  switch (source.source) {
    case "github":
      return githubRepoProblem(source.repo) ?? ref;
    case "git":
      return gitUrlProblem(source.url, { allowLocal: true }) ?? ref;
    case "url":
      return typeof source.url === "string" && /^https?:\/\//i.test(source.url) && !/[\s\u0000-\u001f\u007f]/.test(source.url) ? undefined : { code: "ESOURCE_URL", problem: `the catalog URL ${JSON.stringify(String(source.url).slice(0, 200))} is not an http(s) URL` };
    default:
      return undefined;
  }
}

/** Check of Claude's known marketplaces: shape and each source's required field. */
export function validateKnownMarketplaces(value: unknown): ValidationResult<KnownMarketplaces> {
  const out = new IssueCollector();
  const shape = checkSchema(KnownMarketplacesSchema, value);
  out.absorb(shape);
  if (!shape.ok) return out.result(value as KnownMarketplaces);
  for (const [name, entry] of Object.entries(shape.value)) {
    const at = pointer("", name);
    out.warnings.push(...unknownKeyWarnings(entry as Record<string, unknown>, Object.keys(KnownMarketplaceSchema.properties), at, { onlyTypos: true }));
    const kind = entry.source.source;
    const fields = SOURCE_FIELDS[kind];
    if (!fields) {
      out.warn({ path: pointer(at, "source", "source"), code: "ESOURCE_KIND", message: `${pointer(at, "source", "source")}: unknown marketplace source kind "${kind}"; it is skipped`, expected: Object.keys(SOURCE_FIELDS).join(", "), found: JSON.stringify(kind), hint: "Nothing to do if a newer Claude Code wrote it; xcsh skips this marketplace." });
      continue;
    }
    for (const field of fields) {
      const v = (entry.source as Record<string, unknown>)[field];
      if (typeof v !== "string" || v.length === 0) out.error({ path: pointer(at, "source", field), code: "EREQUIRED", message: `${pointer(at, "source", field)}: a "${kind}" source needs "${field}", found ${describeValue(v)}`, expected: "a non-empty string", found: describeValue(v), hint: `Re-add the marketplace in Claude Code (claude plugin marketplace add …) so "${field}" is recorded.` });
    }
    const present = fields.every((field) => typeof (entry.source as Record<string, unknown>)[field] === "string");
    const refused = present ? claudeSourceProblem(entry.source as Record<string, unknown>) : undefined;
    if (refused) out.error({ path: pointer(at, "source"), code: refused.code, message: `${pointer(at, "source")}: ${refused.problem}`, found: JSON.stringify(entry.source), hint: `${sourceArgHint(refused.code)} xcsh-tools does not import this marketplace.` });
  }
  return out.result(shape.value);
}
