/**
 * A catalog URL the user gave as https is not read once a redirect lands on plain http (a
 * downgrade anyone on the path could then rewrite): ESOURCE_URL, and the refused answer's body is
 * cancelled, never read. The network is a stub: no test reaches beyond this process.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { urlSource } from "../../src/marketplace/sources/url.js";

const CATALOG = JSON.stringify({ name: "web", owner: { name: "o" }, plugins: [] });

/** A fetch that answers `body` as if the request had been redirected to `landed`. */
function answerFrom(landed: string) {
  const cancelled = { value: false };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(CATALOG));
      controller.close();
    },
    cancel() {
      cancelled.value = true;
    },
  });
  vi.stubGlobal("fetch", async () => ({ url: landed, ok: true, status: 200, statusText: "OK", headers: new Headers(), body }));
  return cancelled;
}

const world = { fetchTimeoutMs: 5_000 } as never;
const spec = (uri: string) => ({ kind: "url" as const, uri });

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("catalog URL redirects", () => {
  it("refuses an https catalog that lands on http, without reading it", async () => {
    const cancelled = answerFrom("http://mirror.example/web/marketplace.json");
    await expect(urlSource.fetch(spec("https://cat.example/web/marketplace.json"), "/nonexistent", world)).rejects.toMatchObject({ code: "ESOURCE_URL", message: expect.stringContaining("not https") });
    expect(cancelled.value).toBe(true);
  });

  it("reads an https catalog that lands on https, and an http one the user asked for", async () => {
    answerFrom("https://mirror.example/web/marketplace.json");
    expect((await urlSource.fetch(spec("https://cat.example/web/marketplace.json"), "/nonexistent", world)).loaded).toBeDefined();
    answerFrom("http://127.0.0.1:9/web/marketplace.json");
    expect((await urlSource.fetch(spec("http://127.0.0.1:9/web/marketplace.json"), "/nonexistent", world)).loaded).toBeDefined();
  });
});
