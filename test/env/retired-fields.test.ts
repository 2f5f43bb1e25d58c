import { describe, expect, it } from "vitest";
import { retiredFieldWarner } from "../../src/env/retired-fields.js";
import { captureLog } from "../helpers/capture-log.js";

describe("retiredFieldWarner", () => {
  it("warns once per step name that maxEnvValueBytes is ignored", () => {
    const capture = captureLog();
    const check = retiredFieldWarner({ log: capture.logger, context: "recipe 'tdd'" });
    const first = check({ name: "checkpoint-3", maxEnvValueBytes: 7_340_033 });
    expect(first?.message).toContain("recipe 'tdd': step 'checkpoint-3'");
    expect(first?.message).toContain("retired and ignored");
    expect(check({ name: "checkpoint-3", maxEnvValueBytes: 7_340_033 })).toBeNull();
    expect(check({ name: "other", maxEnvValueBytes: 1 })).not.toBeNull();
    expect(check({ name: "plain" })).toBeNull();
    const warns = capture.events().filter((r) => r["level"] === 40);
    expect(warns.map((w) => w["step"])).toEqual(["checkpoint-3", "other"]);
    expect(capture.lines.join("")).not.toContain("7340033");
  });
});
