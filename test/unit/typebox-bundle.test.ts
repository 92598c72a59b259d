import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as RealTypeBox from "@sinclair/typebox";
import { Value as RealValue } from "@sinclair/typebox/value";
import { beforeAll, describe, expect, it } from "vitest";
import * as source from "../../src/manifest/typebox.js";
import { buildDist, REPO } from "../helpers/build-dist.js";

const BUNDLE = path.join(REPO, "dist", "manifest", "typebox.js");
let bundle: typeof source;

beforeAll(async () => {
  await buildDist();
  bundle = (await import(pathToFileURL(BUNDLE).href)) as typeof source;
});

describe("the built TypeBox module (scripts/bundle-typebox.mjs)", () => {
  it("is one self-contained file: it imports no package, only Node built-ins if anything", async () => {
    const text = await readFile(BUNDLE, "utf8");
    const specifiers = [...text.matchAll(/\b(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']|\brequire\s*\(\s*["']([^"']+)["']/g)]
      .map((m) => m[1] ?? m[2] ?? m[3]!)
      .filter((s) => !s.startsWith("node:"));
    expect(specifiers).toEqual([]);
    expect(text).toContain("TypeBox.Kind");
  });

  it("exports exactly what src/manifest/typebox.ts re-exports", () => {
    expect(Object.keys(bundle).sort()).toEqual(Object.keys(source).sort());
  });

  it("checks documents as the real package does, and its schemas read the same in either copy", () => {
    const build = (T: typeof RealTypeBox.Type) =>
      T.Object({ name: T.String({ minLength: 1 }), tags: T.Optional(T.Array(T.String())), mode: T.Union([T.Literal("a"), T.Literal("b")]) });
    const ours = build(bundle.Type);
    const real = build(RealTypeBox.Type);
    const documents = [{ name: "x", mode: "a" }, { name: "", mode: "a" }, { name: "x", tags: [1], mode: "b" }, { name: "x", mode: "c" }, null, { mode: "a" }];
    for (const doc of documents) {
      const expected = RealValue.Check(real, doc);
      expect(bundle.Value.Check(ours, doc)).toBe(expected);
      expect(bundle.Value.Check(real, doc)).toBe(expected);
      expect(RealValue.Check(ours, doc)).toBe(expected);
      expect([...bundle.Value.Errors(ours, doc)].map((e) => [e.type, e.path])).toEqual([...RealValue.Errors(real, doc)].map((e) => [e.type, e.path]));
    }
    expect(bundle.ValueErrorType.ObjectRequiredProperty).toBe(source.ValueErrorType.ObjectRequiredProperty);
  });
});
