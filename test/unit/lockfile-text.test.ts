/**
 * direct-edit.ts writes lockfiles by hand and trusts a lockfile only when its text is what
 * arborist would write of its content. Its serializer is a faster copy of json-stringify-nice with
 * arborist's key order (lib/shrinkwrap.js `swKeyOrder`): it must give the library's text for every
 * value a lockfile can hold, or a hand-written link would differ from arborist's (or a good
 * lockfile would read as foreign and send every change through the reify).
 */
import stringify from "json-stringify-nice";
import { describe, expect, it } from "vitest";
import { compareEn, lockfileText } from "../../src/plugins/direct-edit.js";

const ORDER = ["name", "version", "lockfileVersion", "resolved", "integrity", "requires", "packages", "dependencies"];
const library = (value: unknown) => stringify(value, ORDER, 2);

/** A small seeded generator (mulberry32): the same hostile values at every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Keys that sort differently by code point, by locale, by preference, or that JS objects reorder (integers). */
const KEYS = [...ORDER, "Name", "NAME", "a", "B", "b", "é", "e", "E", "ä", "z", "Z", "_x", "-x", "10", "2", "01", "node_modules/a", "node_modules/B", "node_modules/@s/x", "", " ", "dev", "peer", "license", "engines", "bin", "ß", "ss", "İ", "i", "😀", "a-b", "a_b", "a.b"];

function value(next: () => number, depth: number): unknown {
  const r = next();
  if (depth > 3 || r < 0.35) return [1, "x", true, null, 0.5, ""][Math.floor(next() * 6)];
  if (r < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 8); i > 0; i--) out[KEYS[Math.floor(next() * KEYS.length)]!] = value(next, depth + 1);
  return out;
}

describe("lockfileText is json-stringify-nice with arborist's key order", () => {
  it("a lockfile as arborist writes one, with links, flags, a scoped name and a nested major", () => {
    const lock = JSON.parse(
      JSON.stringify({
        packages: {
          "node_modules/x-link": { link: true, resolved: "../../dev/x" },
          "": { dependencies: { "x-link": "file:/dev/x", "@s/a": "^1.0.0", B: "1" } },
          "node_modules/@s/a": { version: "1.0.0", resolved: "http://127.0.0.1/a.tgz", integrity: "sha512-x", dependencies: { lib: "^2" }, license: "MIT" },
          "node_modules/@s/a/node_modules/lib": { version: "2.0.0", peer: true, dev: true, engines: { node: ">=20" } },
          "../../dev/x": { version: "1.0.0", devDependencies: {}, funding: { url: "u" } },
        },
        requires: true,
        lockfileVersion: 3,
        name: "plugins",
      }),
    );
    expect(lockfileText(lock)).toBe(library(lock));
  });

  it("2,000 random values: keys by locale, by preference, integer keys, empty and duplicate ones, arrays of objects, objects met twice", () => {
    const next = random(44);
    for (let i = 0; i < 2000; i++) {
      const generated = value(next, 0);
      // Through JSON text, as a lockfile is read (a `__proto__` key is an own key then).
      const parsed = JSON.parse(JSON.stringify(generated).replace('"_x"', '"__proto__"'));
      expect(lockfileText(parsed)).toBe(library(parsed));
    }
    const shared = { b: 1, a: { d: 2, c: 3 } };
    const twice = { z: shared, y: [shared, shared], packages: shared };
    expect(lockfileText(twice)).toBe(library(twice));
  });
});

describe("compareEn is localeCompare(…, \"en\")", () => {
  const icu = new Intl.Collator("en");
  const sign = (n: number) => Math.sign(n);
  const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));

  it("every pair of printable ASCII characters, and of two-character strings over a hostile alphabet", () => {
    for (const a of printable) for (const b of printable) expect(sign(compareEn(a, b)), `${a} ${b}`).toBe(sign(icu.compare(a, b)));
    const alphabet = [" ", "_", "-", ".", "/", "@", "0", "9", "a", "A", "b", "B", "z", "Z", "~", "$"];
    const two = alphabet.flatMap((x) => alphabet.map((y) => x + y));
    for (const a of [...two, ...alphabet, ""]) for (const b of [...two, ...alphabet, ""]) expect(sign(compareEn(a, b)), `${a}|${b}`).toBe(sign(icu.compare(a, b)));
  });

  it("50,000 random strings: shared prefixes, case variants, lengths 0-8, and non-ASCII (asked of ICU)", () => {
    const next = random(7);
    const pool = [...printable, "é", "E\u0301", "ß", "\t", "\u0000", "İ", "😀"];
    const word = () => Array.from({ length: Math.floor(next() * 9) }, () => (next() < 0.97 ? printable : pool)[Math.floor(next() * (next() < 0.97 ? printable.length : pool.length))]!).join("");
    for (let i = 0; i < 50_000; i++) {
      const a = word();
      const r = next();
      const b = r < 0.3 ? a.toUpperCase() : r < 0.5 ? a.slice(0, Math.floor(next() * (a.length + 1))) + word() : word();
      expect(sign(compareEn(a, b)), JSON.stringify([a, b])).toBe(sign(icu.compare(a, b)));
    }
  });
});
