/**
 * The output layer's own guarantees (cli/output.ts, cli/prompt.ts, core/redact.ts), for the routes
 * the built CLI cannot reach from a pipe: colors on (a terminal), the prompts, and the redaction
 * rule for every kind of credential a URL carries.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { mayHoldSecret, redactEvery, redactSecrets } from "../../src/core/redact.js";
import { createOutput, jsonText, style } from "../../src/cli/output.js";
import { createPrompter } from "../../src/cli/prompt.js";
import { renderError } from "../../src/cli/render-error.js";

const HOSTILE = "X\u001b[2K\rFAKE\u0007\u001b]8;;https://evil.example/\u0007link\u001b]8;;\u0007\u202egnp.exe\u202c\u009b31m\u0000\u007f\u2066i\u2069\u2028\nCode: EOK";
const SHOWN = String.raw`X\x1b[2K\rFAKE\x07\x1b]8;;https://evil.example/\x07link\x1b]8;;\x07\u202egnp.exe\u202c\x9b31m\x00\x7f\u2066i\u2069\u2028\nCode: EOK`;
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\p{Bidi_Control}\u2028\u2029]/u;

function capture(color: boolean, json = false) {
  const out = { stdout: "", stderr: "" };
  const output = createOutput({ stdout: { write: (c: string) => (out.stdout += c) }, stderr: { write: (c: string) => (out.stderr += c) } }, { json, color, env: {} });
  return { output, out };
}

describe("E: the sink neutralises outside text and keeps our colors", () => {
  it("with colors on, our styles are the only escapes written; outside text, styled or not, is escaped", () => {
    const { output, out } = capture(true);
    output.line(`${style(output, "bold", HOSTILE)} ${HOSTILE} ${style(output, "red", "ours")}`);
    output.note(style(output, "yellow", HOSTILE));
    expect(out.stdout).toBe(`\u001b[1m${SHOWN}\u001b[22m ${SHOWN} \u001b[31mours\u001b[39m\n`);
    expect(out.stderr).toBe(`\u001b[33m${SHOWN}\u001b[39m\n`);
    // Without the escapes we added, nothing unsafe is left.
    expect(RAW.test(out.stdout.replace(/\u001b\[(1|22|31|39)m/g, ""))).toBe(false);
  });

  it("a style marker cannot be forged by outside text", () => {
    const { output, out } = capture(true);
    style(output, "red", "x");
    // The marker's shape without its random key, and with a guessed one.
    output.line("\uE00031\uE001a\uE000:31\uE001b\uE000deadbeef:8\uE001c");
    expect(out.stdout).not.toContain("\u001b");
  });

  it("--json: valid, no raw DEL/C1/bidi/separator, every value parses back to itself; credentials hidden", () => {
    const { output, out } = capture(false, true);
    const value = { [HOSTILE]: [HOSTILE, { d: HOSTILE }], url: "https://u53r:pw@host/x.json?token=abc&ref=main" };
    output.result(value);
    expect(RAW.test(out.stdout.replace(/\n/g, ""))).toBe(false);
    const parsed = JSON.parse(out.stdout);
    expect(parsed[HOSTILE]).toEqual([HOSTILE, { d: HOSTILE }]);
    expect(parsed.url).toBe("https://***@host/x.json?token=***&ref=main");
    expect(jsonText("\u202e")).toBe('"\\u202e"');
  });

  it("an error's message, hint and causes are escaped; a newline in them cannot start a line of ours", () => {
    const text = renderError(new XcshToolsError("ETEST", `bad value ${HOSTILE}`, { hint: `fix ${HOSTILE}`, cause: new Error(`inner ${HOSTILE}`) }));
    expect(RAW.test(text.replace(/\n/g, ""))).toBe(false);
    for (const line of text.split("\n")) expect(line).toMatch(/^(Error: |Code: |Try this: |Caused by: | )/);
    expect(text.split("\n").filter((l) => l.startsWith("Code: "))).toEqual(["Code: ETEST"]);
    // A multi-line message of ours keeps its lines, each below the first indented.
    const ours = renderError(new XcshToolsError("ETEST", "two things:\n  one\nCode: forged"));
    expect(ours.split("\n")).toEqual(["Error: two things:", "  one", "  Code: forged", "Code: ETEST"]);
  });

  it("a question and its choices are escaped on the prompt", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let written = "";
    output.on("data", (c: Buffer) => (written += c.toString()));
    const prompter = createPrompter(input, output);
    const answer = prompter.choose(`Pick ${HOSTILE}`, [{ value: "a", label: HOSTILE }], "a");
    input.write("\n");
    expect(await answer).toBe("a");
    const confirmed = prompter.confirm(`Allow ${HOSTILE}?`, false);
    input.write("y\n");
    expect(await confirmed).toBe(true);
    prompter.close();
    expect(RAW.test(written.replace(/\n/g, ""))).toBe(false);
    expect(written).toContain(`Allow ${SHOWN}?`);
  });
});

describe("F: the one redaction of URLs", () => {
  it.each([
    ["https://user:tok@host/x", "https://***@host/x"],
    ["https://ghp_abcdef@github.com/o/r.git", "https://***@github.com/o/r.git"],
    ["git+https://u:p@ss@host:8080/r.git", "git+https://***@host:8080/r.git"],
    ["fatal: unable to access 'https://u:tok@h/r.git/': 403", "fatal: unable to access 'https://***@h/r.git/': 403"],
    ["https://h/c.json?token=abc&ref=main&version=2", "https://h/c.json?token=***&ref=main&version=2"],
    ["https://b.s3.amazonaws.com/k?X-Amz-Credential=AK%2F1&X-Amz-Signature=ff00&X-Amz-Expires=60", "https://b.s3.amazonaws.com/k?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Expires=***"],
    ["https://a.blob.core.windows.net/c/f?sv=2020&se=2030&sig=zz%3D", "https://a.blob.core.windows.net/c/f?sv=***&se=***&sig=***"],
    ["https://h/cb#access_token=abc&state=1", "https://h/cb#access_token=***&state=***"],
    ["https://h/path?branch=dev&path=a/b", "https://h/path?branch=dev&path=a/b"],
    ["//registry.example/:_authToken=npm_abcdefghijklmnopqrstuvwx", "//registry.example/:_authToken=***"],
    ["Authorization: Bearer abc.def", "Authorization: Bearer ***"],
    ["https://u:p@h/x.tgz?token=abc: cannot download (https://h/y?sig=s).", "https://***@h/x.tgz?token=***: cannot download (https://h/y?sig=***)."],
    ["plain text, no URL", "plain text, no URL"],
  ])("%s", (text, shown) => {
    expect(redactSecrets(text)).toBe(shown);
    // Applied twice, the same.
    expect(redactSecrets(shown)).toBe(shown);
  });
});

describe("F: text the quick check passes over is text no pattern changes", () => {
  // Pieces each pattern keys on, in every case, cut and joined with the characters around them.
  const pieces = ["://", ":/", "npm_", "NPM_", "npm", "_auth", "_AUTH", "_Auth", "Token", "_password", "_PassWord", "authorization", "AUTHORIZATION", "Authorization", "bearer", "Basic", "=", " ", ":", "@", "?", "&", "#", "u", "x", "é", "\u212a", "\u017f", "\u0130", "https", "abcdefghijklmnopqrstuvwxyz0123", "'", '"', "_authToken=", "AUTHORIZATION: bearer ", "x://u@h", "?sig="];
  it("for 20,000 generated texts, every text a pattern changes is one mayHoldSecret names", () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    let changed = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = "";
      for (let n = Math.floor(next() * 8); n >= 0; n--) text += pieces[Math.floor(next() * pieces.length)];
      const shown = redactEvery(text);
      if (shown !== text) changed++;
      if (!mayHoldSecret(text)) expect(shown, JSON.stringify(text)).toBe(text);
      expect(redactSecrets(text)).toBe(shown);
    }
    // The corpus does reach the patterns (else the check above would hold of any quick check).
    expect(changed).toBeGreaterThan(500);
  });
});

