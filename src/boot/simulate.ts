/**
 * What the loader would make of a list of tool paths, computed from module records instead of
 * imported modules: `listInstalledTools` answers "what would a host load" without running plugin
 * code. It follows CustomToolLoader step for step — dedupe by real path (first wins, silently),
 * module failure → one error, each returned tool → shape check → built-in and first-wins name
 * conflicts — with the loader's own rules and messages (host/tool-claims.ts), so a listing and a
 * boot say the same thing. test/integration/boot-index.test.ts compares the two.
 *
 * Module failures were captured by the validation child, whose wording differs from the
 * loader's; `loaderFailureMessage` maps them back to the loader's texts. Two codes exist only
 * there: `EMODULE_TIMEOUT` (the module blocks the event loop) and `EMODULE_EXIT` (it exits the
 * process) — in a host such a module would hang or kill the host; here they are reported as is.
 */
import type { ToolLoadError, ToolPathWithSource, ToolSource } from "../core/contract.js";
import { DECLARATIVE_MESSAGE, ToolClaims } from "../host/tool-claims.js";
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
  const claims = new ToolClaims(builtIns);
  const seen = new Set<string>();
  for (const { entry, file, key, record } of modules) {
    if (file.endsWith(".md") || file.endsWith(".json")) {
      claims.fail(entry, "EDECLARATIVE", DECLARATIVE_MESSAGE);
      continue;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    if (!record || record.failure) {
      claims.fail(entry, record?.failure?.code ?? "EIMPORT", record ? loaderFailureMessage(record.failure!, file) : `Failed to load tool: ${file} was not validated, so what it exports is unknown`);
      continue;
    }
    const many = record.tools.some((t) => t.index !== undefined);
    for (const tool of record.tools) if (claims.accept(entry, file, many ? tool.index : undefined, tool.name, tool.problems)) tools.push(simulated(entry, file, tool, tool.name));
  }
  return { tools, errors: claims.errors };
}

function simulated(entry: ToolPathWithSource, file: string, tool: ToolRecord, name: string): SimulatedTool {
  const out: SimulatedTool = { path: entry.path, resolvedPath: file, name, label: typeof tool.label === "string" && tool.label !== "" ? tool.label : name };
  if (typeof tool.description === "string") out.description = tool.description;
  if (tool.parameters !== undefined) out.parameters = tool.parameters;
  if (entry.source) out.source = entry.source;
  return out;
}
