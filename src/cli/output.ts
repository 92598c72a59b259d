/**
 * The CLI's output sink. Commands never write to the process streams themselves: they report
 * lines, warnings and one JSON document through this, so `--json` prints nothing but JSON on
 * stdout, `NO_COLOR` is respected in one place, and tests capture everything.
 */

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
      if (!options.json) streams.stdout.write(`${text}\n`);
    },
    note(text) {
      if (!options.json) streams.stderr.write(`${text}\n`);
    },
    result(value) {
      if (options.json) streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
  };
}

/** Wrap `text` in an ANSI style when color is on. */
export function style(output: Pick<Output, "color">, code: "bold" | "dim" | "red" | "yellow" | "green" | "cyan", text: string): string {
  if (!output.color) return text;
  const codes = { bold: [1, 22], dim: [2, 22], red: [31, 39], yellow: [33, 39], green: [32, 39], cyan: [36, 39] } as const;
  const [open, close] = codes[code];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}
