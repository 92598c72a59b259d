/**
 * The CLI's output sink. Commands never write to the process streams themselves: they report
 * lines, warnings and one JSON document through this, so `--json` prints nothing but JSON on
 * stdout, `NO_COLOR` is respected in one place, and tests capture everything.
 *
 * It is also where text from outside (catalogs, manifests, package.json, git's and npm's
 * messages, paths) is made safe to show, whatever command printed it: credentials are hidden
 * (core/redact.ts), and every character that can move the cursor, erase, ring, open a hyperlink
 * or reorder a line (controls C0, DEL and C1; the bidi overrides, isolates and marks; the line
 * and paragraph separators) is shown escaped (`\x1b`, `\u202e`), never written raw. A `line` or
 * `note` is one line: a newline inside it is shown as `\n`, so a value cannot start a line that
 * looks like ours. Our own colors survive because `style` does not write escapes into the text:
 * it writes markers holding a per-process random key, which outside text cannot know, and the
 * sink turns them into colors after the rest was neutralised.
 */
import { redactSecrets } from "../core/redact.js";

/** Where a command reports. */
export interface Output {
  /** `--json` was given: commands must call `json()` exactly once and print nothing else. */
  readonly json: boolean;
  /** Color allowed (TTY, no `NO_COLOR`, not `--json`). */
  readonly color: boolean;
  /** stdout is a terminal (progress may animate, prompts are allowed). */
  readonly interactive: boolean;
  /** A line of the human report (stdout; dropped under `--json`). */
  line(text?: string): void;
  /** A warning or progress line (stderr; dropped under `--json`). */
  note(text: string): void;
  /** The JSON document of a `--json` run (stdout). */
  result(value: unknown): void;
}

export interface OutputStreams {
  stdout: { write(chunk: string): unknown; isTTY?: boolean };
  stderr: { write(chunk: string): unknown; isTTY?: boolean };
}

/** Build the sink from the streams, the environment and the global flags. */
export function createOutput(
  streams: OutputStreams,
  options: { json: boolean; color?: boolean; env: NodeJS.ProcessEnv },
): Output {
  const interactive = Boolean(streams.stdout.isTTY);
  const noColor = options.env.NO_COLOR !== undefined && options.env.NO_COLOR !== "";
  const color = !options.json && (options.color ?? (interactive && !noColor && options.env.TERM !== "dumb"));
  return {
    json: options.json,
    color,
    interactive,
    line(text = "") {
      if (!options.json) streams.stdout.write(`${printable(text)}\n`);
    },
    note(text) {
      if (!options.json) streams.stderr.write(`${printable(text)}\n`);
    },
    result(value) {
      if (options.json) streams.stdout.write(`${jsonText(value)}\n`);
    },
  };
}

/**
 * Every character that must not reach a terminal raw: controls (C0, DEL, C1), bidi formatting
 * (overrides, embeddings, isolates, marks: they reorder what the rest of the line shows) and the
 * line and paragraph separators.
 */
const UNSAFE = /[\p{Cc}\p{Bidi_Control}\u2028\u2029]/gu;
/** Of those, what `JSON.stringify` leaves raw (it escapes C0 itself). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\p{Bidi_Control}\u2028\u2029]/gu;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escaped(char: string): string {
  const code = char.codePointAt(0)!;
  return NAMED[char] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`);
}

/**
 * `text` safe to print: credentials hidden, unsafe characters shown escaped, our `style` markers
 * made colors. `newlines` keeps `\n` (text of many lines that is ours, an error with its hint and
 * causes); `\r` never stays.
 */
export function printable(text: string, options: { newlines?: boolean } = {}): string {
  return applyStyles(text, (piece) => redactSecrets(piece).replace(UNSAFE, (char) => (char === "\n" && options.newlines ? char : escaped(char))));
}

/**
 * A `--json` document: string values redacted, and what JSON.stringify leaves raw (DEL, C1, bidi,
 * U+2028/9) written as `\uXXXX`, which any JSON reader turns back into the same string.
 */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "string" ? redactSecrets(v) : v), 2);
  return text.replace(UNSAFE_IN_JSON, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, "0")}`);
}

const CODES = { bold: [1, 22], dim: [2, 22], red: [31, 39], yellow: [33, 39], green: [32, 39], cyan: [36, 39] } as const;

/** The key of this process's style markers: random, so no text from outside can forge one. */
let markerKey: string | undefined;
function marker(code: number): string {
  markerKey ??= Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
  return `\uE000${markerKey}:${code}\uE001`;
}

/** `text` with every piece between style markers passed through `clean`, and the markers made colors. */
function applyStyles(text: string, clean: (piece: string) => string): string {
  if (markerKey === undefined || !text.includes("\uE000")) return clean(text);
  const parts = text.split(new RegExp(`\uE000${markerKey}:(\\d+)\uE001`));
  // split with a group: text, code, text, code, ..., text
  return parts.map((part, i) => (i % 2 === 1 ? `\u001b[${part}m` : clean(part))).join("");
}

/** Wrap `text` in an ANSI style when color is on (applied when the line is written, after the text was neutralised). */
export function style(output: Pick<Output, "color">, code: keyof typeof CODES, text: string): string {
  if (!output.color) return text;
  const [open, close] = CODES[code];
  return `${marker(open)}${text}${marker(close)}`;
}
