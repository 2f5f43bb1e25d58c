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
 *
 * Issue 27, finding 5: the characters are chosen by Unicode property, so the
 * soft hyphen, tags, Hangul fillers, variation selectors, the combining
 * grapheme joiner and U+FFF9–FFFB are escaped too (MISSED: seen raw on
 * 08fb2db in escapeControls, explain and run's stderr).
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { displayName, escapeControls, escapeJsonControls } from "../../src/errors.js";
import { cli, scratch } from "../helpers/run-cli.js";

// Every invisible character, by Unicode property (tab and newline are the
// output's own layout): controls, format characters (soft hyphen, bidi,
// zero-width, tags, interlinear annotation), line and paragraph separators,
// surrogates and the default-ignorables (Hangul fillers, variation
// selectors, the combining grapheme joiner).
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;
const RAW = /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;
// The ones a list of ranges missed (issue 27, finding 5), named one by one
// from outside the code: seen raw in the output on 08fb2db.
const MISSED = [
  "\u00ad", // soft hyphen
  "\u180e", // Mongolian vowel separator
  "\u{e0041}", // tag latin capital letter A
  "\u{e0001}", // language tag
  "\u115f", // Hangul choseong filler
  "\u1160", // Hangul jungseong filler
  "\u3164", // Hangul filler
  "\uffa0", // halfwidth Hangul filler
  "\ufe0f", // variation selector-16
  "\u{e0100}", // variation selector-17
  "\u034f", // combining grapheme joiner
  "\u17b4", // Khmer vowel inherent aq
  "\ufff9", // interlinear annotation anchor
  "\ufffa", // interlinear annotation separator
  "\ufffb", // interlinear annotation terminator
  "\u0600", // Arabic number sign
  "\u{1d173}", // musical symbol begin beam
];
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
  ...MISSED,
];

describe("escapeControls", () => {
  it("escapes every control, bidi and invisible format character, and lone surrogates", () => {
    for (const bad of HOSTILE) {
      const out = escapeControls(`a${bad}b`);
      expect(out, JSON.stringify(bad)).not.toMatch(RAW);
      expect(out).not.toMatch(/[\ud800-\udfff]/);
      expect(out).toMatch(/^a(\\u[0-9a-f]{4}|[^\\])*b$/);
      expect(JSON.parse(`"${out}"`), JSON.stringify(bad)).toBe(`a${bad}b`);
    }
    expect(escapeControls("\u202e")).toBe("\\u202e");
    expect(escapeControls("\u009b")).toBe("\\u009b");
  });

  it("escapes every code point with an invisible property, and only those", () => {
    // Exhaustive over the code points (surrogates alone, as lone ones).
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const char = String.fromCodePoint(cp);
      const out = escapeControls(char);
      if (INVISIBLE.test(char)) {
        if (out === char || INVISIBLE.test(out)) expect.fail(`U+${cp.toString(16)} shown raw`);
      } else if (out !== char) {
        expect.fail(`U+${cp.toString(16)} escaped though visible`);
      }
    }
  });

  it("property: no invisible code point survives, and the escapes read back as the input", () => {
    const invisible = fc.constantFrom(...MISSED, "\u202e", "\u200d", "\u2028", "\u0085", "\u001b");
    const piece = fc.oneof(
      fc.string({ unit: "grapheme" }),
      fc.string({ unit: "binary" }),
      invisible,
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const text = pieces.join("").replace(/["\\]/g, "");
        const out = escapeControls(text);
        expect(out).not.toMatch(INVISIBLE);
        expect(JSON.parse(`"${out}"`)).toBe(text);
        const json = escapeJsonControls(JSON.stringify({ text }));
        expect(json).not.toMatch(INVISIBLE);
        expect((JSON.parse(json) as { text: string }).text).toBe(text);
      }),
      { numRuns: 2000 },
    );
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
  const key = `evil\u009b31m\u202eKEY\u2066x\u0085y\u007f${MISSED.join("")}`;
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
