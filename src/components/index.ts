/**
 * The component model (skills, commands, agents, hooks, MCP/LSP servers, output styles, bin/,
 * monitors, tools, extensions) of every kind of plugin root: scanning, schemas, context cost and
 * summaries. Pure reading: nothing here executes or imports plugin code.
 */
export { scanPluginComponents, type ScanOptions } from "./scan.js";
export { substituteRoot } from "./root-refs.js";
export { estimateTokens, toolCost, totalCost } from "./cost.js";
export { countByKind, formatTokens, summarizeComponents } from "./summary.js";
export { readFrontmatter } from "./frontmatter.js";
export * from "./types.js";
