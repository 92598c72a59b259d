import { describe, expect, it } from "vitest";
import { raceTimeout } from "../../src/host/timeout.js";

const never = () => new Promise<never>(() => {});
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
const timeoutError = (label: string) => () => new Error(`${label} timed out`);

describe("raceTimeout (one shared timer)", () => {
  it("settles with the work, or rejects with onTimeout once its own deadline passes", async () => {
    const started = performance.now();
    const outcomes = await Promise.allSettled([
      raceTimeout(after(10, "quick"), 2000, timeoutError("quick")),
      raceTimeout(never(), 300, timeoutError("long")),
      // Added after a longer race: its shorter deadline must still fire first.
      raceTimeout(never(), 60, timeoutError("short")),
      raceTimeout(Promise.reject(new Error("thrown")), 2000, timeoutError("thrown")),
    ]);
    const elapsed = performance.now() - started;
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message))).toEqual([
      "quick",
      "long timed out",
      "short timed out",
      "thrown",
    ]);
    expect(elapsed).toBeGreaterThanOrEqual(295);
  });

  it("rejects each pending race at its own deadline, in deadline order", async () => {
    const order: string[] = [];
    const started = performance.now();
    const at: Record<string, number> = {};
    const race = (label: string, ms: number) =>
      raceTimeout(never(), ms, timeoutError(label)).catch(() => {
        order.push(label);
        at[label] = performance.now() - started;
      });
    await Promise.all([race("c", 150), race("a", 30), race("b", 90)]);
    expect(order).toEqual(["a", "b", "c"]);
    expect(at.a).toBeGreaterThanOrEqual(29);
    expect(at.b).toBeGreaterThanOrEqual(89);
    expect(at.c).toBeGreaterThanOrEqual(149);
  });

  it("a work that settles after its timeout changes nothing", async () => {
    const late = after(80, "late");
    await expect(raceTimeout(late, 20, timeoutError("late"))).rejects.toThrow("late timed out");
    await late;
  });

  it("ms <= 0 or not finite means no timeout: the work itself is returned", () => {
    const work = Promise.resolve(1);
    expect(raceTimeout(work, 0, timeoutError("x"))).toBe(work);
    expect(raceTimeout(work, Number.POSITIVE_INFINITY, timeoutError("x"))).toBe(work);
  });

  it("shares one timer among pending races and leaves none once all have settled (nothing keeps the process alive)", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    const before = timers();
    const gates: (() => void)[] = [];
    const races = [1, 2, 3].map((n) => raceTimeout(new Promise<number>((resolve) => gates.push(() => resolve(n))), 60_000, timeoutError("t")));
    expect(timers()).toBe(before + 1);
    for (const open of gates) open();
    expect(await Promise.all(races)).toEqual([1, 2, 3]);
    expect(timers()).toBe(before);
  });
});
