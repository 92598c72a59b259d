import { beforeAll, describe, expect, it } from "vitest";
import { prepareSettingsCheck, validateSettingsFile } from "../../src/core/settings-check.js";
import { STATE_FILES } from "../../src/validate/static-checks.js";

describe("validate: our own settings files", () => {
  beforeAll(prepareSettingsCheck);
  it("is recognised by name for every JSON settings file", () => {
    for (const name of ["xcsh-tools.json", ".xcsh-toolsrc.json", "xcsh-tools.config.json"]) {
      expect(STATE_FILES[name], name).toBeTypeOf("function");
    }
  });

  it("accepts a valid file and warns about a typo with a did-you-mean", () => {
    const result = validateSettingsFile({ lockWaitMs: 100, registy: "http://127.0.0.1:1" }, "/p/xcsh-tools.json");
    expect(result.ok).toBe(true);
    expect(result.warnings).toEqual([
      expect.objectContaining({ code: "ECONFIG_UNKNOWN_KEY", path: "/registy", message: expect.stringContaining('did you mean "registry"') }),
    ]);
  });

  it("reports a wrong type with the file, the field and a hint", () => {
    const result = validateSettingsFile({ timeouts: { gitMs: "slow" } }, "/p/.xcsh-toolsrc.json");
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]).toMatchObject({ code: "ECONFIG", path: "/timeouts/gitMs" });
    expect(result.issues[0]?.message).toContain("/p/.xcsh-toolsrc.json");
    expect(result.issues[0]?.message).toContain("timeouts.gitMs");
    expect(result.issues[0]?.hint).toBeTruthy();
  });

  it("rejects a document that is not an object", () => {
    const result = validateSettingsFile([1, 2], "/p/xcsh-tools.json");
    expect(result.ok).toBe(false);
  });
});
