/** "Did you mean": the closest installed names to a misspelled one (core/suggest.ts). */
import { describe, expect, it } from "vitest";
import { closestNames, didYouMean, editDistance } from "../../src/core/suggest.js";

describe("closestNames", () => {
  const installed = ["@acme/search", "weather", "web-fetch", "hello@market", "hello@other"];

  it("each kind of typo: a swap, a missing, an extra and a wrong letter", () => {
    expect(editDistance("serach", "search")).toBe(1);
    expect(closestNames("@acme/serach", installed)).toEqual(["@acme/search"]);
    expect(closestNames("wether", installed)).toEqual(["weather"]);
    expect(closestNames("weathers", installed)).toEqual(["weather"]);
    expect(closestNames("web-fetsh", installed)).toEqual(["web-fetch"]);
  });

  it("a scope or a marketplace left off or misspelled, and case", () => {
    expect(closestNames("search", installed)).toEqual(["@acme/search"]);
    expect(closestNames("@acme/Search", installed)).toEqual(["@acme/search"]);
    expect(closestNames("helo@market", installed)).toEqual(["hello@market"]);
    // Both ids of the plugin are as close: both are offered.
    expect(closestNames("hello", installed)).toEqual(["hello@market", "hello@other"]);
  });

  it("nothing close, nothing installed, or the exact name: no suggestion", () => {
    expect(closestNames("totally-different", installed)).toEqual([]);
    expect(closestNames("ab", ["xy"])).toEqual([]);
    expect(closestNames("anything", [])).toEqual([]);
    expect(closestNames("weather", ["weather"])).toEqual([]);
    expect(didYouMean("totally-different", installed)).toBe("");
    expect(didYouMean("wether", installed)).toBe("Did you mean `weather`? ");
  });

  it("a very long name against many candidates stays cheap (lengths far apart are not compared)", () => {
    const many = Array.from({ length: 2000 }, (_, i) => `plugin-${i}`);
    const started = performance.now();
    expect(closestNames("x".repeat(5000), many)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
