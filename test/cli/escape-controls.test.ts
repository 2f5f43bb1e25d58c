/**
 * No raw control or bidi character from input reaches the command's output
 * (issue 21, finding 12b): a context key or step-value name holding C1
 * controls (U+009B is a CSI: "\u009b31m" turns a terminal red) or bidi
 * overrides is shown escaped, as \uXXXX, in `explain` (table and --json),
 * in `run`'s refusal and in the log lines on stderr. One function does it:
 * escapeControls (errors.ts), and escapeJsonControls for JSON text.
 *
 * Seen red on the old code: the table, the JSON and run's stderr held the
 * raw U+009B and U+202E (displayName escaped C0 only).
 */
import { afterAll, describe, expect, it } from "vitest";
import { displayName, escapeControls, escapeJsonControls } from "../../src/errors.js";
import { cli, scratch } from "../helpers/run-cli.js";

const RAW =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/;
const HOSTILE = [
  "\u001b[2J",
  "\u0007",
  "\u007f",
  "\u0085",
  "\u009b31m",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200e",
  "\u200f",
  "\u061c",
  "\u200b",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\ud800",
];

describe("escapeControls", () => {
  it("escapes every control, bidi and invisible format character, and lone surrogates", () => {
    for (const bad of HOSTILE) {
      const out = escapeControls(`a${bad}b`);
      expect(out, JSON.stringify(bad)).not.toMatch(RAW);
      expect(out).not.toMatch(/[\ud800-\udfff]/);
      expect(out).toMatch(/^a(\\u[0-9a-f]{4}|[^\\])*b$/);
    }
    expect(escapeControls("\u202e")).toBe("\\u202e");
    expect(escapeControls("\u009b")).toBe("\\u009b");
  });

  it("leaves printable text alone, non-ASCII letters and emoji included", () => {
    for (const fine of ["PATH", "café", "日本語", "emoji 🎉", "tab-free text"]) {
      expect(escapeControls(fine)).toBe(fine);
    }
  });

  it("displayName and JSON text use it", () => {
    for (const bad of HOSTILE) expect(displayName(`k${bad}`)).not.toMatch(RAW);
    const json = escapeJsonControls(JSON.stringify({ name: "a\u009b\u202eb\n" }, null, 2));
    expect(json).not.toMatch(RAW);
    expect((JSON.parse(json) as { name: string }).name).toBe("a\u009b\u202eb\n");
  });
});

describe("command output", () => {
  const tmp = scratch();
  afterAll(() => tmp.remove());
  const key = `evil\u009b31m\u202eKEY\u2066x\u0085y\u007f`;
  const file = tmp.write("context.json", JSON.stringify({ [key]: "v", ok: "fine" }));

  it("explain (table and --json) shows the name escaped", () => {
    const table = cli(["explain", "--context-file", file, "--", "true"]);
    expect(table.status).toBe(0);
    expect(table.stdout).toContain("\\u009b31M\\u202eKEY");
    expect(table.stdout).not.toMatch(RAW);
    const json = cli(["explain", "--json", "--context-file", file, "--", "true"]);
    expect(json.stdout).not.toMatch(RAW);
    const names = (JSON.parse(json.stdout) as { variables: { name: string }[] }).variables.map(
      (v) => v.name,
    );
    expect(names).toContain(`CTX_${key.toUpperCase()}`);
  });

  it("run's refusal, its --verbose table and the log lines show it escaped", () => {
    const run = cli([
      "run",
      "--verbose",
      "--log-level",
      "debug",
      "--context-file",
      file,
      "--",
      "true",
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("\\u009b31M\\u202eKEY");
    expect(run.stderr).not.toMatch(RAW);
    const step = cli(["run", "--var", `${key}=1`, "--", "true"]);
    expect(step.status).toBe(2);
    expect(step.stderr).not.toMatch(RAW);
    expect(step.stderr).toContain("\\u202e");
  });
});
