/**
 * Where a JSON text stops being JSON. `JSON.parse` names the position only on some runtimes
 * (V8 on Node 22+ says "at position N"; Node 20 and Bun name the token or nothing), and no library
 * we bundle reports it for strict JSON (yaml reads `{"a": b}` as valid YAML), so this small
 * RFC 8259 scanner finds the offset of the first character that cannot continue the text. It is
 * called only after `JSON.parse` has failed, to word the error; it builds no value.
 */

/** The 0-based offset, and 1-based line and column, of the first bad character (the end for a cut-off text). */
export interface JsonSyntaxPosition {
  offset: number;
  line: number;
  column: number;
}

/** The position at which `text` stops being JSON, or undefined when it is JSON. */
export function jsonSyntaxPosition(text: string): JsonSyntaxPosition | undefined {
  let at = 0;
  const fail = (): never => {
    throw at;
  };
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at++;
  };
  const expect = (literal: string) => {
    for (const char of literal) if (text[at++] !== char) (at--, fail());
  };
  const digits = () => {
    const start = at;
    while (at < text.length && text[at]! >= "0" && text[at]! <= "9") at++;
    if (at === start) fail();
  };
  const string = () => {
    expect('"');
    for (;;) {
      const char = text[at];
      if (char === undefined || char < " ") fail();
      at++;
      if (char === '"') return;
      if (char !== "\\") continue;
      const escape = text[at];
      if (escape !== undefined && '"\\/bfnrt'.includes(escape)) at++;
      else if (escape === "u") {
        at++;
        for (let i = 0; i < 4; i++) (/[0-9a-fA-F]/.test(text[at] ?? "") ? at++ : fail());
      } else fail();
    }
  };
  /** An object's or array's items after its opening character, up to `close`. */
  const list = (close: string, item: () => void): void => {
    at++;
    space();
    if (text[at] === close) return void at++;
    for (;;) {
      item();
      space();
      if (text[at] === ",") at++;
      else return expect(close);
    }
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === "{") {
      return list("}", () => {
        space();
        string();
        space();
        expect(":");
        value();
      });
    }
    if (char === "[") return list("]", value);
    if (char === '"') return string();
    if (char === "t") return expect("true");
    if (char === "f") return expect("false");
    if (char === "n") return expect("null");
    if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) {
      if (text[at] === "-") at++;
      if (text[at] === "0") at++;
      else digits();
      if (text[at] === ".") (at++, digits());
      if (text[at] === "e" || text[at] === "E") {
        at++;
        if (text[at] === "+" || text[at] === "-") at++;
        digits();
      }
      return;
    }
    fail();
  };
  try {
    value();
    space();
    if (at < text.length) fail();
    return undefined;
  } catch (offset) {
    if (typeof offset !== "number") throw offset;
    const before = text.slice(0, offset).split("\n");
    return { offset, line: before.length, column: before.at(-1)!.length + 1 };
  }
}

/** `JSON.parse`'s complaint about `text`, led by where the text breaks (the same words on every runtime). */
export function jsonErrorDetail(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const at = jsonSyntaxPosition(text);
  return at ? `at line ${at.line}, column ${at.column} (position ${at.offset}): ${message}` : message;
}
