/**
 * Errors that tell the truth (core/failure.ts, npm-client.ts `npmError`): real Node errors where
 * the machine can make them (ENOSPC from /dev/full, EACCES and EPERM from sysfs, which refuses
 * even root), and npm's fetch errors shaped exactly as npm-registry-fetch and minipass-fetch make
 * them. Tests run as root, so chmod cannot provoke a permission error.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { codedFailure } from "../../src/core/failure.js";
import { renderErrorJson } from "../../src/cli/render-error.js";
import { npmError, type NpmClientOptions } from "../../src/plugins/npm-client.js";

async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

const client: NpmClientOptions = { registry: { registry: "https://registry.example/", "@acme:registry": "https://npm.acme.example/repo/" }, home: "/nonexistent", allowScripts: false };

/** An HTTP error as npm-registry-fetch's HttpErrorGeneral has it. */
function httpError(status: number, uri: string): Error {
  return Object.assign(new Error(`${status} Not Found - GET ${uri}`), { name: "HttpErrorGeneral", statusCode: status, code: `E${status}`, method: "GET", uri });
}

/** A connection failure as minipass-fetch's FetchError has it (the system error's fields copied in). */
function fetchError(url: string, code: string): Error {
  return Object.assign(new Error(`request to ${url} failed, reason: connect ${code} 127.0.0.1:1`), { name: "FetchError", code, errno: code, syscall: "connect", type: "system" });
}

describe("a full disk and a refused permission name the path", () => {
  it("ENOSPC (a real one, writing /dev/full) is EDISK_FULL naming the folder being written", async () => {
    const error = await caught(() => writeFile("/dev/full", "x"));
    expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
    const coded = codedFailure(error, { folder: "/home/u/.xcsh/plugins" })!;
    expect(coded.code).toBe("EDISK_FULL");
    expect(coded.message).toContain("/home/u/.xcsh/plugins");
    expect(coded.hint).toMatch(/Free some space/);
  });

  it("EACCES (a real one, sysfs) is EPERMISSION naming the path", async () => {
    const error = await caught(() => writeFile("/sys/kernel/xcsh-tools-test", "x"));
    expect((error as NodeJS.ErrnoException).code).toBe("EACCES");
    const coded = codedFailure(error)!;
    expect(coded.code).toBe("EPERMISSION");
    expect(coded.message).toContain("/sys/kernel/xcsh-tools-test");
    expect(coded.file).toBe("/sys/kernel/xcsh-tools-test");
  });

  it("EPERM (a real one, sysfs) is EPERMISSION naming the path, also when it escapes to the CLI's renderer uncoded", async () => {
    const error = await caught(() => mkdir("/sys/xcsh-tools-test"));
    expect((error as NodeJS.ErrnoException).code).toBe("EPERM");
    expect(codedFailure(error)!.code).toBe("EPERMISSION");
    expect(renderErrorJson(error).error).toMatchObject({ code: "EPERMISSION", file: "/sys/xcsh-tools-test" });
  });

  it("npm's errors of the disk are EDISK_FULL / EPERMISSION, never a registry failure", () => {
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write", path: "/h/.npm/_cacache/tmp/abc" });
    expect(npmError(enospc, "good@1.0.0", client).code).toBe("EDISK_FULL");
    expect(npmError(enospc, "good@1.0.0", client).message).toContain("/h/.npm/_cacache/tmp/abc");
    const eacces = Object.assign(new Error("EACCES: permission denied, mkdir '/h/.npm/_cacache'"), { code: "EACCES", errno: -13, syscall: "mkdir", path: "/h/.npm/_cacache" });
    expect(npmError(eacces, "good@1.0.0", client).code).toBe("EPERMISSION");
    expect(npmError(eacces, "good@1.0.0", client).message).toContain("/h/.npm/_cacache");
  });

  it("a coded error passes through unchanged; an unrelated error is not claimed", () => {
    const coded = new XcshToolsError("EX", "x");
    expect(codedFailure(coded)).toBe(coded);
    expect(codedFailure(new Error("boom"))).toBeUndefined();
  });
});

describe("a tarball URL's failure is ETARBALL naming that URL; a registry's stays the registry's", () => {
  it("HTTP 404 of a tarball URL the spec names", () => {
    const url = "https://files.example/x-1.0.0.tgz";
    const coded = npmError(httpError(404, url), url, client, undefined, url);
    expect(coded.code).toBe("ETARBALL");
    expect(coded.message).toContain(url);
    expect(coded.message).toContain("HTTP 404");
    expect(coded.message).not.toMatch(/registry/i);
  });

  it("a refused connection to a tarball URL, and to a dependency's tarball URL off every registry", () => {
    const url = "http://127.0.0.1:1/x-1.0.0.tgz";
    for (const explicit of [url, undefined]) {
      const coded = npmError(fetchError(url, "ECONNREFUSED"), "plugin", client, undefined, explicit);
      expect(coded.code).toBe("ETARBALL");
      expect(coded.message).toContain(url);
      expect(coded.message).toContain("ECONNREFUSED");
    }
  });

  it("a failed request to the registry (or a scope's registry) is EREGISTRY naming the registry", () => {
    const refused = npmError(fetchError("https://registry.example/good", "ECONNREFUSED"), "good", client, "good");
    expect(refused.code).toBe("EREGISTRY");
    expect(refused.message).toContain("registry https://registry.example/");
    const scoped = npmError(httpError(503, "https://npm.acme.example/repo/@acme%2fx"), "@acme/x", client, "@acme/x");
    expect(scoped.code).toBe("EREGISTRY");
    expect(scoped.message).toContain("https://npm.acme.example/repo/");
    expect(scoped.message).toContain("HTTP 503");
    expect(npmError(httpError(404, "https://registry.example/nope"), "nope", client, "nope").code).toBe("ENOT_FOUND");
  });
});

describe("node-tar's refusals are the tarball's, not the registry's", () => {
  it("its decompression-ratio guard (an error with no code) is ETARBALL", () => {
    const coded = npmError(new Error("max decompression ratio exceeded: 1000.22 > 1000"), "x@1.0.0", client, "x");
    expect(coded.code).toBe("ETARBALL");
  });
});
