/**
 * What `new` asks on a terminal, driven through the real readline prompter on in-memory streams:
 * missing name, a bad name asked again with the fix as default, template by number, the
 * description default; and that without a prompter nothing is asked and a missing name is
 * ENAME_MISSING (exit 2).
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { resolveNewRequest } from "../../src/cli/commands/new.js";
import { canPrompt, createPrompter } from "../../src/cli/prompt.js";

/** A prompter whose input answers `answers` one line per question. */
function scripted(answers: string[]) {
  const input = new PassThrough();
  const output = new PassThrough();
  let transcript = "";
  output.on("data", (chunk: Buffer) => {
    transcript += chunk.toString("utf8");
    // Answer each question once it has been printed in full.
    if (/[:?)]\s$/.test(transcript) && answers.length > 0) input.write(`${answers.shift()}\n`);
  });
  const prompter = createPrompter(input, output);
  return { prompter, transcript: () => transcript, end: () => input.end() };
}

describe("new on a terminal", () => {
  it("asks only what the flags left open, re-asks a bad name with the fix as default", async () => {
    const { prompter, transcript } = scripted(["My Tools", "", "3", ""]);
    const request = await resolveNewRequest(undefined, {}, "/p", prompter);
    prompter.close();
    expect(request).toEqual({ name: "my-tools", template: "streaming", description: "Run npm scripts one after another, streaming progress", cwd: "/p" });
    expect(transcript()).toContain('"My Tools" is not a valid npm package name');
    expect(transcript()).toContain("(my-tools)");
    expect(transcript()).toContain("1. plugin");
  });

  it("asks nothing when the flags say everything", async () => {
    const { prompter, transcript } = scripted([]);
    const request = await resolveNewRequest("x-y", { template: "tool", description: "d", dir: "out" }, "/p", prompter);
    prompter.close();
    expect(request).toEqual({ name: "x-y", template: "tool", description: "d", dir: "out", cwd: "/p" });
    expect(transcript()).toBe("");
  });

  it("input that ends mid-question is EPROMPT_CLOSED, not a hang", async () => {
    const { prompter, end } = scripted([]);
    const pending = prompter.text("Name");
    end();
    await expect(pending).rejects.toMatchObject({ code: "EPROMPT_CLOSED" });
  });

  it("confirm takes y/n and the default", async () => {
    const { prompter } = scripted(["", "yes"]);
    expect(await prompter.confirm("Overwrite?", false)).toBe(false);
    expect(await prompter.confirm("Overwrite?", false)).toBe(true);
    prompter.close();
  });
});

describe("new without a terminal", () => {
  it("prompts only when stdin and stdout are both TTYs", () => {
    expect(canPrompt({ isTTY: true }, { isTTY: true })).toBe(true);
    expect(canPrompt({ isTTY: true }, {})).toBe(false);
    expect(canPrompt({}, { isTTY: true })).toBe(false);
  });

  it("takes defaults and refuses a missing name with ENAME_MISSING", async () => {
    expect(await resolveNewRequest("abc", {}, "/p", undefined)).toEqual({ name: "abc", template: "plugin", cwd: "/p" });
    await expect(resolveNewRequest(undefined, {}, "/p", undefined)).rejects.toMatchObject({ code: "ENAME_MISSING", exitCode: 2 });
  });
});
