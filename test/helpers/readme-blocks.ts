/**
 * The README's shell blocks, as a reader runs them: every ```sh block in order, named by the
 * `<!-- readme-test: NAME -->` marker right before it (if any), and each line split into the
 * commands it runs (`#` starts a comment, `&&` chains commands; the README uses no other shell
 * syntax, and `commandsOf` refuses any so that a block cannot silently mean something else).
 */

export interface ShBlock {
  /** The marker's name, or undefined for an unmarked block. */
  name: string | undefined;
  /** The block's non-empty lines, comments removed. */
  lines: string[];
}

export function shBlocks(markdown: string): ShBlock[] {
  const blocks: ShBlock[] = [];
  for (const match of markdown.matchAll(/(?:<!-- readme-test: ([\w-]+) -->\s*\n)?```sh\n([\s\S]*?)\n```/g)) {
    const lines = match[2]!
      .split("\n")
      .map((line) => line.replace(/(^|\s)#.*$/, "").trim())
      .filter(Boolean);
    blocks.push({ name: match[1], lines });
  }
  return blocks;
}

/** The commands of one line: `a b && c d` → [["a", "b"], ["c", "d"]]. */
export function commandsOf(line: string): string[][] {
  if (/[|;<>`$(){}'"\\*?]/.test(line.replace(/&&/g, ""))) throw new Error(`README line uses shell syntax the tests do not run: ${line}`);
  return line.split("&&").map((part) => part.trim().split(/\s+/));
}
