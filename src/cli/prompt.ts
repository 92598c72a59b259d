/**
 * Questions on a terminal, for commands that may ask (`new`). Commands only ask through a
 * `Prompter`, and only get one when stdin AND stdout are TTYs and neither `--yes` nor `--json`
 * was given: a script, a pipe or CI never waits for input. Built on node:readline/promises so it
 * runs the same under Node and Bun; the streams are parameters so tests can drive it. What it
 * writes may quote a plugin's name or a folder: it passes through cli/output.ts `printable`.
 */
import { createInterface } from "node:readline/promises";
import { XcshToolsError } from "../core/errors.js";
import { printable } from "./output.js";

/** What a command may ask. */
export interface Prompter {
  /** A free answer; empty input takes `defaultValue`. */
  text(question: string, defaultValue?: string): Promise<string>;
  /** One of `choices` by number or name; empty input takes `defaultValue`. */
  choose(question: string, choices: { value: string; label: string }[], defaultValue: string): Promise<string>;
  /** Yes or no; empty input takes `defaultValue`. */
  confirm(question: string, defaultValue: boolean): Promise<boolean>;
  close(): void;
}

type Input = NodeJS.ReadableStream & { isTTY?: boolean };
type OutputStream = NodeJS.WritableStream & { isTTY?: boolean };

/** True when both ends are terminals: the only case in which we ask. */
export function canPrompt(input: { isTTY?: boolean }, output: { isTTY?: boolean }): boolean {
  return Boolean(input.isTTY) && Boolean(output.isTTY);
}

/** A prompter on `input`/`output`. End of input (Ctrl-D) rejects with `EPROMPT_CLOSED`. */
export function createPrompter(input: Input, output: OutputStream): Prompter {
  const rl = createInterface({ input, output, terminal: Boolean(input.isTTY && output.isTTY) });
  let closed = false;
  rl.on("close", () => {
    closed = true;
  });
  const ask = async (question: string): Promise<string> => {
    if (closed) throw promptClosed();
    const answer = await new Promise<string>((resolve, reject) => {
      const onClose = () => reject(promptClosed());
      rl.once("close", onClose);
      void rl
        .question(printable(question))
        .then(resolve, reject)
        .finally(() => rl.off("close", onClose));
    });
    return answer.trim();
  };
  return {
    async text(question, defaultValue) {
      const answer = await ask(`${question}${defaultValue ? ` (${defaultValue})` : ""}: `);
      return answer === "" ? (defaultValue ?? "") : answer;
    },
    async choose(question, choices, defaultValue) {
      const lines = choices.map((c, i) => `  ${i + 1}. ${c.value}${c.label ? ` — ${c.label}` : ""}`);
      output.write(`${[question, ...lines].map((l) => printable(l)).join("\n")}\n`);
      for (;;) {
        const answer = await ask(`Choose 1-${choices.length} or a name (${defaultValue}): `);
        if (answer === "") return defaultValue;
        const byNumber = /^\d+$/.test(answer) ? choices[Number(answer) - 1] : undefined;
        const picked = byNumber ?? choices.find((c) => c.value === answer);
        if (picked) return picked.value;
        output.write(`${printable(`"${answer}" is not one of the choices.`)}\n`);
      }
    },
    async confirm(question, defaultValue) {
      for (;;) {
        const answer = (await ask(`${question} ${defaultValue ? "(Y/n)" : "(y/N)"} `)).toLowerCase();
        if (answer === "") return defaultValue;
        if (answer === "y" || answer === "yes") return true;
        if (answer === "n" || answer === "no") return false;
      }
    },
    close() {
      rl.close();
    },
  };
}

function promptClosed(): XcshToolsError {
  return new XcshToolsError("EPROMPT_CLOSED", "Input ended before the question was answered", {
    hint: "Answer the questions, or pass the values as flags with --yes.",
  });
}
