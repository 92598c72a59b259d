/**
 * The boot index (issue 7): what discovery found and what each tool entry exports, kept in
 * `<xcshHome>/plugins/.xcsh-tools/boot-index.json` (the views, all a boot reads) and
 * `boot-modules.json` (the module records; format.ts) so that a host boots without scanning and
 * `xcsh-tools tools` answers without importing plugin code; and what installed plugins bring
 * besides tools, in `boot-components.json` (components.ts), so that `listInstalledComponents`,
 * `list` and `show` answer without reading plugin folders. What follows is about the first two.
 *
 * Freshness key. An index answers one question — "which tool paths and discovery errors for
 * (home, cwd, configuredPaths, providers, trusted)" — and records every input that answer was computed
 * from (inputs.ts: state files and manifests hashed, tools folders and entries by signature).
 * It is fresh for that question exactly when every input still has its signature, or its bytes
 * when the signature moved (fingerprint.ts). Checking costs one read of the index and one `stat`
 * per input, with no directory listing; a scan lists every tools folder, parses every state file
 * and manifest and checks them against their schemas.
 *
 * Why views per cwd rather than a user part plus an always-scanned project part: the project
 * folder changes user-level results — `.xcsh/plugin-overrides.json` disables npm plugins and
 * picks their features, and Claude Code `project` entries of `~/.claude/plugins/installed_plugins.json`
 * apply inside their folder only — so splitting would need every provider to report what it read
 * per level. A view per question is simple and exact; the file keeps the 8 most recently built
 * views, and a question without a view costs one ordinary scan (and writes its view).
 *
 * Trust. Whether the project may bring code (core/trust.ts) is decided before the index is read,
 * once per call, and is part of the question: a view built for a trusted project is never the
 * answer for an untrusted one, nor the other way round. The user's trust record is also an input
 * of every view, so `trust`/`untrust` or a hand edit make the views stale. Deciding costs one
 * small read of that record and two realpaths, next to the stats of a fresh check. A refresh
 * after a mutation rebuilds a trusted view only while the user's record still trusts its project
 * (a host may have trusted it for itself): the rebuild imports its tools in the validation child.
 *
 * Who writes it:
 * - every committed mutation (plugins/mutation.ts → `refreshBootIndex`, under the lock): each kept
 *   view is scanned again, plus the view of the command's cwd, and every tool entry whose bytes
 *   are new is imported in the validation child (validate/module-check.ts) with the real
 *   transpile cache, which records its tools' names, descriptions and parameter schemas and
 *   leaves TypeScript compiled for the next boot;
 * - a host boot or `tools` that found its view stale: it scans and writes the new view (without
 *   the lock: an index is only a cache, a lost race costs one more scan later, never a wrong
 *   answer, because every view carries its own inputs).
 *
 * Writes happen only when two scans on either side of taking the fingerprints agree, so a file
 * changed while the index was being built makes the index stale rather than wrong.
 *
 * `listInstalledTools` uses module records for the answer (simulate.ts); an entry without a
 * record (a tools-folder tool the host scanned but nobody validated yet) is validated in the
 * child — out of process, so a tool that hangs or exits cannot take the CLI with it — and its
 * record is kept. A host never fails because of the index: any problem means a full scan.
 */
/*
 * The pieces, each named for what it holds:
 * - world.ts: where the index lives, the question a call asks (view key), the trust decision;
 * - format.ts: the files' shapes, versions and (de)serialising; fingerprint.ts, inputs.ts: inputs;
 * - store.ts: reading and writing the files, finding and replacing views;
 * - views.ts: building a view (scan, fingerprint, scan again) and checking it;
 * - discover.ts: the host's boot path (`discoverWithBootIndex`), importing only what it needs;
 * - module-records.ts: tool entries' records and their validation in the child;
 * - installed-tools.ts, check.ts, refresh.ts: `listInstalledTools`, `checkBootIndex`, `refreshBootIndex`;
 * - components.ts: the component inventory of installed plugins (`listInstalledComponents`).
 */
export type { BootIndex, BootView, ModuleRecord, ModuleRecords, ViewKey } from "./format.js";
export { BOOT_INDEX_VERSION } from "./format.js";
export { bootIndexGenerator, type BootIndexOptions } from "./world.js";
export { MAX_BOOT_VIEWS } from "./store.js";
export { discoverWithBootIndex, type BootDiscovery } from "./discover.js";
export { checkBootIndex, type BootIndexCheck } from "./check.js";
export { preloadRefresh, refreshBootIndex, type BootRefreshReport } from "./refresh.js";
export { listInstalledTools, type InstalledTool, type InstalledToolsList, type ListInstalledToolsOptions } from "./installed-tools.js";
