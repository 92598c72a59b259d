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

/**
 * The commands of one line: `a b && c d` → [["a", "b"], ["c", "d"]]. A single-quoted word is
 * taken literally, as a shell takes it (`run t '{"a": 1}'` → ["run", "t", '{"a": 1}']); any
 * other shell syntax, in or out of a word, is refused.
 */
export function commandsOf(line: string): string[][] {
  const refuse = () => new Error(`README line uses shell syntax the tests do not run: ${line}`);
  const commands: string[][] = [[]];
  for (const m of line.matchAll(/'([^']*)'|[^\s']+/g)) {
    const end = m.index + m[0].length;
    // A word glued to a quote (a'b', 'a'b) is one shell word made of parts: not taken apart here.
    if ((m.index > 0 && !/\s/.test(line[m.index - 1]!)) || (end < line.length && !/\s/.test(line[end]!))) throw refuse();
    if (m[1] !== undefined) commands.at(-1)!.push(m[1]);
    else if (m[0] === "&&") commands.push([]);
    else if (/[|&;<>`$(){}"\\*?]/.test(m[0])) throw refuse();
    else commands.at(-1)!.push(m[0]);
  }
  if (line.split("'").length % 2 === 0 || commands.some((c) => c.length === 0)) throw refuse();
  return commands;
}
