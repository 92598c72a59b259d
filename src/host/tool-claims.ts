/**
 * The loader's rules once a module gave its tools, shared with the boot index's simulation of it
 * (boot/simulate.ts) so that a listing and a boot say the same thing: a tool with problems is one
 * error; a name already claimed, by a built-in or an earlier tool (first wins), is a conflict.
 * Messages keep the host's texts as prefixes (loader.ts).
 */
import type { ToolLoadError, ToolPathWithSource, ToolSource } from "../core/contract.js";

export const DECLARATIVE_MESSAGE = "Declarative tool files (.md, .json) cannot be loaded as executable modules";

type Claim = { builtIn: true } | { path: string; source?: ToolSource };

/** The errors of one load, and the tool names claimed so far. */
export class ToolClaims {
  readonly errors: ToolLoadError[] = [];
  readonly #claims = new Map<string, Claim>();

  constructor(builtIns: readonly string[]) {
    for (const name of builtIns) this.#claims.set(name, { builtIn: true });
  }

  fail(entry: ToolPathWithSource, code: string, error: string, extra: Partial<ToolLoadError> = {}): void {
    const record: ToolLoadError = { path: String(entry?.path), error, code };
    if (entry?.source) record.source = entry.source;
    if (extra.toolName !== undefined) record.toolName = extra.toolName;
    if (extra.conflictsWith) record.conflictsWith = extra.conflictsWith;
    this.errors.push(record);
  }

  /**
   * Whether the tool `name` that `entry`'s module returned (at `index` of an array) is taken,
   * given the `problems` its shape check found; when it is not, the reason is recorded.
   */
  accept(entry: ToolPathWithSource, file: string, index: number | undefined, name: string | undefined, problems: readonly { code: string; field: string; message: string }[]): name is string {
    if (problems.length > 0) {
      const where = index === undefined ? `Tool returned by ${file}` : `Tool at index ${index} returned by ${file}`;
      const code = problems.some((p) => p.code === "ETOOL_SHAPE") ? "ETOOL_SHAPE" : "ETOOL_NAME";
      this.fail(entry, code, `${where} is invalid: ${problems.map((p) => `${p.field}: ${p.message}`).join("; ")}`, { toolName: name });
      return false;
    }
    const claim = this.#claims.get(name!);
    if (!claim) {
      this.#claims.set(name!, { path: entry.path, source: entry.source });
      return true;
    }
    const skipped = `${describe(entry)} was skipped`;
    if ("builtIn" in claim) {
      this.fail(entry, "ECONFLICT_BUILTIN", `Tool name "${name}" conflicts with existing tool: "${name}" is a built-in tool; ${skipped}`, { toolName: name, conflictsWith: { builtIn: true } });
    } else {
      this.fail(entry, "ECONFLICT", `Tool name "${name}" conflicts with existing tool: ${describe(claim)} loaded it first; ${skipped}`, { toolName: name, conflictsWith: { path: claim.path, source: claim.source } });
    }
    return false;
  }
}

/** How a source reads in a message: "npm Plugin x (user)". */
export function describeSource(source: ToolSource | undefined): string {
  if (!source) return "a configured path";
  return `${source.providerName}${source.plugin ? ` ${source.plugin}` : ""} (${source.level})`;
}

function describe({ path, source }: { path: string; source?: ToolSource }): string {
  return source ? `${path} (${source.providerName || source.provider}, ${source.level}${source.plugin ? `, plugin ${source.plugin}` : ""})` : path;
}
