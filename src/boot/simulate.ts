/**
 * What the loader would make of a list of tool paths, computed from module records instead of
 * imported modules: `listInstalledTools` answers "what would a host load" without running plugin
 * code. It follows CustomToolLoader step for step — dedupe by real path (first wins, silently),
 * module failure → one error, each returned tool → shape check → built-in and first-wins name
 * conflicts — and produces the loader's codes and messages (loader.ts `#accept`, `#fail`), so a
 * listing and a boot say the same thing. test/integration/boot-index.test.ts compares the two.
 *
 * Module failures were captured by the validation child, whose wording differs from the
 * loader's; `loaderFailureMessage` maps them back to the loader's texts. Two codes exist only
 * there: `EMODULE_TIMEOUT` (the module blocks the event loop) and `EMODULE_EXIT` (it exits the
 * process) — in a host such a module would hang or kill the host; here they are reported as is.
 *
 * The loader's source of truth is loader.ts; keep the message builders below in step with it.
 */
import type { ToolLoadError, ToolPathWithSource, ToolSource } from "../core/contract.js";
import type { ModuleRecord, ToolRecord } from "./format.js";

/** One entry to simulate: the path as discovered, the file the loader would import, its real path. */
export interface PreparedModule {
  entry: ToolPathWithSource;
  /** The file the loader imports (a folder resolved to its index). */
  file: string;
  /** Dedupe key: the real path of `file`. */
  key: string;
  /** What validating `file` produced; undefined when it was never validated. */
  record: ModuleRecord | undefined;
}

/** A tool the loader would accept, as known from its record. */
export interface SimulatedTool {
  path: string;
  resolvedPath: string;
  name: string;
  label?: string;
  description?: string;
  parameters?: unknown;
  source?: ToolSource;
}

type Claim = { builtIn: true } | { path: string; source?: ToolSource };

function describeSource(source: ToolSource | undefined): string {
  if (!source) return "";
  const plugin = source.plugin ? `, plugin ${source.plugin}` : "";
  return ` (${source.providerName || source.provider}, ${source.level}${plugin})`;
}

/** The loader's message for a module failure recorded by the validation child. */
export function loaderFailureMessage(failure: { code: string; message: string }, file: string): string {
  const { code, message } = failure;
  switch (code) {
    case "ENOT_A_FACTORY": {
      const exported = /^the module's default export is (.*), not a factory function$/.exec(message);
      if (exported) return `Tool must export a default function: ${file} exports ${exported[1]} as its default`;
      const threw = /^reading the default export threw: (.*)$/s.exec(message);
      return `Tool must export a default function (${threw ? threw[1] : message})`;
    }
    case "EHOST_EXPORTS":
      return `Failed to load tool: ${message}`;
    case "EFACTORY_THROW":
      return `Failed to load tool: ${message.replace(/^the factory threw: /, "")}`;
    case "EFACTORY_TIMEOUT":
      return `Failed to load tool: factory of ${file} ${message.replace(/^the factory /, "")}`;
    case "EFACTORY_RESULT":
      return `Failed to load tool: the factory of ${file} ${message.replace(/^the factory /, "")}`;
    default:
      return `Failed to load tool: ${message}`;
  }
}

/** Simulate `CustomToolLoader.load(entries)` on records; `builtIns` as the host passes them. */
export function simulateLoad(modules: readonly PreparedModule[], builtIns: readonly string[]): { tools: SimulatedTool[]; errors: ToolLoadError[] } {
  const tools: SimulatedTool[] = [];
  const errors: ToolLoadError[] = [];
  const claims = new Map<string, Claim>();
  for (const name of builtIns) claims.set(name, { builtIn: true });
  const seen = new Set<string>();

  const fail = (entry: ToolPathWithSource, code: string, error: string, extra: Partial<ToolLoadError> = {}) => {
    const item: ToolLoadError = { path: String(entry.path), error, code };
    if (entry.source) item.source = entry.source;
    if (extra.toolName !== undefined) item.toolName = extra.toolName;
    if (extra.conflictsWith) item.conflictsWith = extra.conflictsWith;
    errors.push(item);
  };

  for (const { entry, file, key, record } of modules) {
    if (file.endsWith(".md") || file.endsWith(".json")) {
      fail(entry, "EDECLARATIVE", "Declarative tool files (.md, .json) cannot be loaded as executable modules");
      continue;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    if (!record) {
      fail(entry, "EIMPORT", `Failed to load tool: ${file} was not validated, so what it exports is unknown`);
      continue;
    }
    if (record.failure) {
      fail(entry, record.failure.code, loaderFailureMessage(record.failure, file));
      continue;
    }
    const many = record.tools.some((t) => t.index !== undefined);
    for (const tool of record.tools) accept(entry, file, tool, many ? tool.index : undefined);
  }
  return { tools, errors };

  function accept(entry: ToolPathWithSource, file: string, tool: ToolRecord, index: number | undefined): void {
    const where = index === undefined ? `Tool returned by ${file}` : `Tool at index ${index} returned by ${file}`;
    if (tool.problems.length > 0) {
      const code = tool.problems.some((p) => p.code === "ETOOL_SHAPE") ? "ETOOL_SHAPE" : "ETOOL_NAME";
      const detail = tool.problems.map((p) => `${p.field}: ${p.message}`).join("; ");
      fail(entry, code, `${where} is invalid: ${detail}`, tool.name !== undefined ? { toolName: tool.name } : {});
      return;
    }
    const name = tool.name as string;
    const claim = claims.get(name);
    const describeEntry = `${entry.path}${describeSource(entry.source)}`;
    if (claim) {
      if ("builtIn" in claim) {
        fail(entry, "ECONFLICT_BUILTIN", `Tool name "${name}" conflicts with existing tool: "${name}" is a built-in tool; ${describeEntry} was skipped`, {
          toolName: name,
          conflictsWith: { builtIn: true },
        });
      } else {
        fail(
          entry,
          "ECONFLICT",
          `Tool name "${name}" conflicts with existing tool: ${claim.path}${describeSource(claim.source)} loaded it first; ${describeEntry} was skipped`,
          { toolName: name, conflictsWith: { path: claim.path, source: claim.source } },
        );
      }
      return;
    }
    claims.set(name, { path: entry.path, source: entry.source });
    const out: SimulatedTool = { path: entry.path, resolvedPath: file, name };
    if (typeof tool.label === "string" && tool.label !== "") out.label = tool.label;
    else out.label = name;
    if (typeof tool.description === "string") out.description = tool.description;
    if (tool.parameters !== undefined) out.parameters = tool.parameters;
    if (entry.source) out.source = entry.source;
    tools.push(out);
  }
}
