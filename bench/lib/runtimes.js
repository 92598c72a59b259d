/**
 * The runtimes a benchmark runs under: the Node running it, then Node 22, Node 24 and Bun from
 * $XCSH_TOOLS_TEST_NODE22 / $XCSH_TOOLS_TEST_NODE24 / $XCSH_TOOLS_TEST_BUN, else from where .ci/run
 * installs them (.ci/runtimes/node_modules/.bin and .ci/runtimes/node24/node_modules/.bin); a
 * missing one is reported and skipped. `BENCH_RUNTIMES=node22,bun` keeps only those.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { repo } from "./build.js";

function probe(command) {
  const r = spawnSync(command, ["--version"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

export function findRuntimes() {
  const found = [{ id: "node", label: `Node ${process.versions.node}`, command: process.execPath }];
  for (const [id, name, envVar, bin] of [
    ["node22", "Node", "XCSH_TOOLS_TEST_NODE22", "node_modules/.bin/node"],
    ["node24", "Node", "XCSH_TOOLS_TEST_NODE24", "node24/node_modules/.bin/node"],
    ["bun", "Bun", "XCSH_TOOLS_TEST_BUN", "node_modules/.bin/bun"],
  ]) {
    const command = process.env[envVar] || path.join(repo, ".ci", "runtimes", ...bin.split("/"));
    const version = existsSync(command) ? probe(command) : undefined;
    if (version) found.push({ id, label: `${name} ${version.replace(/^v/, "")}`, command });
    else console.log(`(${id} not found at ${command}: skipped; see .ci/run for how it installs the runtimes)`);
  }
  const only = process.env.BENCH_RUNTIMES?.split(",").filter(Boolean);
  return only ? found.filter((runtime) => only.includes(runtime.id)) : found;
}
