/**
 * The inventory part of `npm run conformance:record`: what the pinned Claude Code's
 * `claude plugin details` says each plugin of test/fixtures/conformance/inventory/ holds and
 * costs, into test/fixtures/conformance/inventory.json, which
 * test/integration/conformance-inventory.test.ts compares `xcsh-tools show --json` with.
 *
 * `details` only answers for an installed plugin and has no JSON output, so the fixtures are
 * copied (without their case.json) into one local catalog in a temporary folder, that catalog is
 * added and each plugin installed under the recorder's temporary HOME (loopback only: a folder
 * source), and the text `details` prints is parsed: the component lists by kind, the always-on
 * total (exact), and each skill's and agent's always-on and on-invoke figures as printed
 * ("< 20", "~130", "~1.2k": `details` rounds them).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const MARKETPLACE = "conformance-inventory";
const LISTS = { Skills: "skills", Agents: "agents", Hooks: "hooks", "MCP servers": "mcpServers", "LSP servers": "lspServers" };

/** The fixtures of `dir`: one plugin folder each, with a case.json saying what it pins down. */
function fixtureIds(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
}

/** One local catalog listing every fixture as an in-repo plugin named after its folder. */
function buildCatalog(fixturesDir, ids) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cc-inventory-catalog-"));
  for (const id of ids) {
    fs.cpSync(path.join(fixturesDir, id), path.join(dir, "plugins", id), { recursive: true });
    fs.rmSync(path.join(dir, "plugins", id, "case.json"), { force: true });
  }
  fs.mkdirSync(path.join(dir, ".claude-plugin"));
  const plugins = ids.map((id) => ({ name: id, source: `./plugins/${id}`, description: `Inventory fixture ${id}` }));
  fs.writeFileSync(path.join(dir, ".claude-plugin", "marketplace.json"), JSON.stringify({ name: MARKETPLACE, owner: { name: "xcsh-tools conformance" }, plugins }, null, 2));
  return dir;
}

/** What `details` printed, as data; `error` when it did not print an inventory. */
export function parseDetails(text) {
  const out = { skills: [], agents: [], hooks: [], mcpServers: [], lspServers: [], alwaysOn: null, components: [] };
  let table = false;
  for (const line of text.split("\n")) {
    const list = /^ {2}(Skills|Agents|Hooks|MCP servers|LSP servers) \((\d+)\)(?: {2}(.*?))?(?: {2}\(.*\))?$/.exec(line);
    if (list) {
      out[LISTS[list[1]]] = list[3] ? list[3].split(", ") : [];
      if (out[LISTS[list[1]]].length !== Number(list[2])) throw new Error(`details listed ${list[2]} ${list[1]} but named ${out[LISTS[list[1]]].length}: ${line}`);
      continue;
    }
    const total = /^ {2}Always-on: +~([\d,]+) tok/.exec(line);
    if (total) out.alwaysOn = Number(total[1].replaceAll(",", ""));
    if (/^ {2}component +always-on +on-invoke$/.test(line)) {
      table = true;
      continue;
    }
    const row = table ? /^ {2}(\S+) +(< 20|~[\d.,]+k?) +(< 20|~[\d.,]+k?)$/.exec(line) : null;
    if (row) out.components.push({ name: row[1], alwaysOn: row[2], onInvoke: row[3] });
    else if (table && line.trim() === "") table = false;
  }
  if (out.alwaysOn === null) throw new Error(`no "Always-on" total in:\n${text}`);
  return out;
}

/** Record every inventory fixture with the Claude Code `run(args)` runs; returns {id: record}. */
export function recordInventory({ fixturesDir, run }) {
  const ids = fixtureIds(fixturesDir);
  const catalog = buildCatalog(fixturesDir, ids);
  const fixtures = {};
  try {
    const added = run(["plugin", "marketplace", "add", catalog]);
    if (added.status !== 0) throw new Error(`marketplace add failed: ${added.stderr}${added.stdout}`);
    for (const id of ids) {
      const installed = run(["plugin", "install", `${id}@${MARKETPLACE}`]);
      if (installed.status !== 0) throw new Error(`install of ${id} failed: ${installed.stderr}${installed.stdout}`);
      const details = run(["plugin", "details", `${id}@${MARKETPLACE}`]);
      if (details.status !== 0) throw new Error(`details of ${id} failed: ${details.stderr}${details.stdout}`);
      fixtures[id] = parseDetails(details.stdout);
    }
  } finally {
    fs.rmSync(catalog, { recursive: true, force: true });
  }
  return fixtures;
}

/** Lines saying what changed from the previous inventory.json (`canonical`: JSON with sorted keys). */
export function inventoryDifferences(before, after, canonical) {
  const lines = [];
  for (const id of [...new Set([...Object.keys(before ?? {}), ...Object.keys(after)])].sort()) {
    const a = before?.[id] && canonical(before[id]).trim();
    const b = after[id] && canonical(after[id]).trim();
    if (a !== b) lines.push(!before?.[id] ? `+ inventory ${id}` : !after[id] ? `- inventory ${id}` : `~ inventory ${id}: ${a} -> ${b}`);
  }
  return lines;
}

/** The whole step: record, write `file` (canonical JSON), print the differences. */
export function recordInventoryFile({ fixturesDir, file, version, run, canonical }) {
  const fixtures = recordInventory({ fixturesDir, run });
  const before = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")).fixtures : {};
  fs.writeFileSync(file, canonical({ claudeCode: version, fixtures }));
  const lines = inventoryDifferences(before, fixtures, canonical);
  console.log(lines.length ? lines.join("\n") : "No inventory differences from the previous inventory.json.");
  console.error(`Recorded the inventory of ${Object.keys(fixtures).length} plugins with Claude Code ${version} into ${path.basename(file)}.`);
}
