/**
 * `jsonSyntaxPosition` (core/json-position.ts) words JSON errors the same on every runtime: it
 * must agree with `JSON.parse` on what is JSON (hand-picked edge cases, then thousands of random
 * mutations of real documents), and name the first character that cannot continue the text.
 */
import { describe, expect, it } from "vitest";
import { jsonErrorDetail, jsonSyntaxPosition } from "../../src/core/json-position.js";

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe("jsonSyntaxPosition", () => {
  const edge = [
    "{}", "[]", "0", "-0", "1.5e+10", "1E-2", '"\\u00e9\\n"', "true", " null ", '{"a":[1,{"b":false}]}',
    "", " ", "{", "[1,]", "{,}", '{"a"}', '{"a":}', "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "'a'",
    '"\\x"', '"\\u12g4"', '"a\nb"', '"unterminated', "[1 2]", '{"a":1,}', "{} {}", "NaN", "Infinity", '{"a":1}x',
  ];
  it("agrees with JSON.parse on edge cases", () => {
    for (const text of edge) expect({ text, json: jsonSyntaxPosition(text) === undefined }).toEqual({ text, json: parses(text) });
  });

  it("agrees with JSON.parse on 5000 random mutations of real documents", () => {
    const seeds = [JSON.stringify({ name: "Ada", tags: ["a", "b"], n: -1.25e3, ok: true, none: null, nested: { deep: [[], {}] } }), '{"words": ["x", "y\\"z"], "count": 0}'];
    const alphabet = '{}[]",:0123456789-+.eE tfnrul\\\n\t';
    let seed = 42;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 5000; i++) {
      let text = seeds[random(seeds.length)]!;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1);
        const kind = random(3);
        const char = alphabet[random(alphabet.length)]!;
        text = kind === 0 ? text.slice(0, at) + char + text.slice(at) : kind === 1 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + char + text.slice(at + 1);
      }
      expect({ text, json: jsonSyntaxPosition(text) === undefined }).toEqual({ text, json: parses(text) });
    }
  });

  it("names the first character that cannot continue the text, with line and column", () => {
    expect(jsonSyntaxPosition('{"name": Ada}')).toEqual({ offset: 9, line: 1, column: 10 });
    expect(jsonSyntaxPosition('{\n  "a": 1,\n  "b": [1, 2,]\n}')).toEqual({ offset: 25, line: 3, column: 14 });
    expect(jsonSyntaxPosition('{"a": 1')).toEqual({ offset: 7, line: 1, column: 8 });
    expect(jsonErrorDetail('{"name": Ada}', new SyntaxError("Unexpected token"))).toBe("at line 1, column 10 (position 9): Unexpected token");
  });
});
