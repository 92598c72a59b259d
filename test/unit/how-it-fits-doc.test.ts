/**
 * docs/how-it-fits.md draws the discovery order and an install's steps; this keeps the pictures
 * true: the numbered sources of the first diagram are `PROVIDER_IDS` in order (the order
 * src/discovery/index.ts runs them), and the install diagram's steps come in the order
 * src/plugins/apply.ts takes them (stage, consent, validate, then the staged commit).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROVIDER_IDS } from "../../src/core/host-options.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DOC = readFileSync(path.join(ROOT, "docs", "how-it-fits.md"), "utf8");
const diagrams = [...DOC.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((m) => m[1]!);

describe("docs/how-it-fits.md", () => {
  it("has the two diagrams", () => {
    expect(diagrams).toHaveLength(2);
  });

  it("numbers the sources in the order discovery runs them", () => {
    const drawn = [...diagrams[0]!.matchAll(/\["(\d+) ([\w-]+):/g)].map((m) => [Number(m[1]), m[2]]);
    expect(drawn).toEqual(PROVIDER_IDS.map((id, i) => [i + 1, id]));
  });

  it("draws an install's steps in the order the applier takes them", () => {
    const nodes = [...diagrams[1]!.matchAll(/(?:^|\s)(\w+)[[{]"/gm)].map((m) => m[1]);
    expect(nodes).toEqual(["spec", "resolve", "lock", "stage", "consent", "rollback", "validate", "commit", "refresh", "boot"]);
    // The code's order of the same steps: staged tree, consent, validation, staging for the commit.
    const apply = readFileSync(path.join(ROOT, "src", "plugins", "apply.ts"), "utf8");
    const body = apply.slice(apply.indexOf("async function reifyAndStage("));
    const at = ["await reifyCopy(", "await approveModules(", "await validateArrived(", "await stageWork("].map((call) => body.indexOf(call));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // And the boot index is refreshed after the commit, in the one wrapper every change runs in.
    const mutation = readFileSync(path.join(ROOT, "src", "plugins", "mutation.ts"), "utf8");
    const code = mutation.slice(mutation.indexOf("async function lockedMutation<T>("));
    const [committed, refreshed] = ["await withTransaction(", "await refreshBootAndClear(world)"].map((call) => code.indexOf(call));
    expect(committed).toBeGreaterThan(0);
    expect(refreshed).toBeGreaterThan(committed!);
  });
});
