/**
 * YAML frontmatter of Markdown components (skills, commands, agents, output styles): a first line
 * `---`, YAML, a line `---`, then the body. Parsed with the `yaml` package, with aliases capped so
 * that a hostile file cannot expand into gigabytes (a "billion laughs" document).
 */
import { createRequire } from "node:module";
import { errorMessage } from "../core/errors.js";
import { isRecord } from "../manifest/result.js";

const require = createRequire(import.meta.url); // unbundled only
/**
 * The `yaml` package, evaluated when the first frontmatter block is met: it is the largest
 * library a components scan loads, and most plugins an install or `validate` scans have no
 * Markdown components. In the build the line marked `unbundled only` is dropped
 * (scripts/lib/bundle.mjs), so this `require` is the bundler's and runs the library on first use.
 */
const yaml = () => require("yaml") as typeof import("yaml");

/** What a Markdown component file holds. */
export interface FrontmatterRead {
  /** The frontmatter object; `{}` when the file has none. */
  data: Record<string, unknown>;
  /** Everything after the frontmatter. */
  body: string;
  /** Whether the file opens with a frontmatter block. */
  present: boolean;
  /** Why the frontmatter could not be read, when it could not. */
  error?: string;
  /**
   * Why the YAML did not parse, when `data` was then read line by line (`key: value`) as the
   * xcsh host does (and Claude Code loads such files too): a description holding `: ` unquoted
   * is common in real plugins.
   */
  lenient?: string;
  /** The `yaml` package's error codes when `lenient` (e.g. MULTILINE_IMPLICIT_KEY). */
  yamlCodes?: string[];
}

const OPEN = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*$/m;

/** Split and parse the frontmatter of `text`. Never throws. */
export function readFrontmatter(text: string): FrontmatterRead {
  const open = OPEN.exec(text);
  if (!open) return { data: {}, body: text, present: false };
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) return { data: {}, body: text, present: true, error: "the frontmatter block opened by --- is never closed by a --- line" };
  const yamlText = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  let parsed: unknown;
  try {
    parsed = yaml().parse(yamlText, { maxAliasCount: 50, prettyErrors: false });
  } catch (error) {
    // Aliases past the cap are an attack, not a typo: no host should read on.
    if (/alias/i.test(errorMessage(error))) return { data: {}, body, present: true, error: `its YAML frontmatter does not parse: ${errorMessage(error).split("\n")[0]}` };
    // The host's own fallback (pi-utils parseFrontmatter): top-level `key: value` lines, values as text.
    const data: Record<string, unknown> = {};
    for (const line of yamlText.replace(/\r\n?/g, "\n").split("\n")) {
      const match = /^([\w-]+):\s*(.*)$/.exec(line);
      if (match) data[match[1]!] = match[2]!.trim();
    }
    // Every error's code, not only the first thrown: `validate` judges by them (validate/static-checks.ts).
    // A document is not turned into values here, so aliases are not expanded.
    const yamlCodes = yaml().parseDocument(yamlText).errors.map((e) => e.code);
    return { data, body, present: true, lenient: `its YAML frontmatter does not parse (${errorMessage(error).split("\n")[0]})`, yamlCodes };
  }
  if (parsed === null || parsed === undefined) return { data: {}, body, present: true };
  if (!isRecord(parsed)) return { data: {}, body, present: true, error: "its frontmatter is not a YAML mapping (key: value lines)" };
  return { data: parsed, body, present: true };
}

/**
 * Whether Claude Code (2.1.332) drops every field of this frontmatter, which we read leniently: a
 * plain value continued on unindented lines that look like keys (the `yaml` package's
 * MULTILINE_IMPLICIT_KEY; an agent's multi-line examples are the usual case). Its validator
 * refuses such a file and its listing falls back to the body's first line; other YAML errors (an
 * unclosed `[`, a `: ` inside a value) it reads, as we do, line by line.
 */
export function claudeCodeDropsFields(fm: FrontmatterRead): boolean {
  return fm.yamlCodes?.includes("MULTILINE_IMPLICIT_KEY") === true;
}
