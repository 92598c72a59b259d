/**
 * Rendering a template folder: every file under `templates/<name>/` is copied to the target with
 * `{{placeholder}}`s replaced in its path and, when it is text, in its content. Binary files
 * (any NUL byte, or bytes that are not UTF-8) are copied byte for byte. A placeholder the
 * template uses but the renderer does not know is an error, never left in the output: a typo in
 * a template must fail its own test, not ship `{{nmae}}` to users.
 *
 * Dotfiles are stored under another name because npm's packing drops or rewrites some of them
 * (`.gitignore` becomes `.npmignore`, `.npmrc` is never packed) and dot-folders are easy to lose
 * in copies: `_gitignore` → `.gitignore`, `_npmrc` → `.npmrc`, `_xcsh-plugin` → `.xcsh-plugin`,
 * `_claude-plugin` → `.claude-plugin`, `_xcsh` → `.xcsh` (create-vite's rename map).
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { TextDecoder } from "node:util";
import { XcshToolsError } from "../core/errors.js";

/** Path segments renamed when rendering (the stored name → the real one). */
export const RENAMED_SEGMENTS: Readonly<Record<string, string>> = {
  _gitignore: ".gitignore",
  _npmrc: ".npmrc",
  _editorconfig: ".editorconfig",
  "_xcsh-plugin": ".xcsh-plugin",
  "_claude-plugin": ".claude-plugin",
  _xcsh: ".xcsh",
};

const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9]*)\s*\}\}/g;

/** One rendered file: where it goes (relative, `/`-separated) and its bytes. */
export interface RenderedFile {
  /** Path inside the template folder. */
  source: string;
  /** Path inside the target folder. */
  path: string;
  content: Buffer;
}

/** Replace every `{{key}}` of `text`; throws `ETEMPLATE_PLACEHOLDER` for an unknown key. */
export function renderText(text: string, vars: Readonly<Record<string, string>>, where = "template"): string {
  return text.replace(PLACEHOLDER, (_match, key: string) => {
    const value = vars[key];
    if (value === undefined) {
      throw new XcshToolsError("ETEMPLATE_PLACEHOLDER", `${where} uses {{${key}}}, which the renderer does not define`, {
        hint: `Known placeholders: ${Object.keys(vars).sort().join(", ")}.`,
      });
    }
    return value;
  });
}

/** A template-relative path as it is written: placeholders filled, dot-names restored. */
export function renderPath(relative: string, vars: Readonly<Record<string, string>>): string {
  return relative
    .split("/")
    .map((segment) => {
      const renamed = RENAMED_SEGMENTS[segment] ?? segment;
      const rendered = renderText(renamed, vars, `the file name ${relative}`);
      if (rendered === "" || rendered === "." || rendered === ".." || rendered.includes("/") || rendered.includes("\\")) {
        throw new XcshToolsError("ETEMPLATE_PLACEHOLDER", `the file name ${relative} renders to an unusable segment "${rendered}"`);
      }
      return rendered;
    })
    .join("/");
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The text of `bytes` when it is UTF-8 without NUL bytes, else undefined (binary). */
export function decodeText(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Every file of a template folder (relative, sorted, `/`-separated). */
async function listTemplateFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .sort();
}

/** Render every file of the template folder `dir` with `vars` (nothing is written). */
export async function renderTemplate(dir: string, vars: Readonly<Record<string, string>>): Promise<RenderedFile[]> {
  const files: RenderedFile[] = [];
  for (const source of await listTemplateFiles(dir)) {
    const bytes = await readFile(path.join(dir, source));
    const text = decodeText(bytes);
    const content = text === undefined ? bytes : Buffer.from(renderText(text, vars, source), "utf8");
    files.push({ source, path: renderPath(source, vars), content });
  }
  const seen = new Set<string>();
  for (const file of files) {
    if (seen.has(file.path)) throw new XcshToolsError("ETEMPLATE_PLACEHOLDER", `two template files render to ${file.path}`);
    seen.add(file.path);
  }
  return files;
}
