/** The --env-file format: NAME=value lines, comments, `export`, quoting; errors name the line, never a value. */
import { describe, expect, it } from "vitest";
import { parseEnvFile } from "../../src/cli/env-file.js";
import { UsageError } from "../../src/cli/usage-error.js";

describe("parseEnvFile", () => {
  it("reads NAME=value lines literally, skipping blanks and comments", () => {
    const env = parseEnvFile(
      [
        "# comment",
        "",
        "PLAIN=a b  # not a comment",
        "export EXPORTED=1",
        "EMPTY=",
        "EQUALS=x=y",
        "SINGLE='a \\n $b'",
        'DOUBLE="line\\nnext \\"q\\" \\\\ \\$"',
        "PLAIN=later wins",
        "  # indented comment",
      ].join("\n"),
    );
    expect([...env]).toEqual([
      ["PLAIN", "later wins"],
      ["EXPORTED", "1"],
      ["EMPTY", ""],
      ["EQUALS", "x=y"],
      ["SINGLE", "a \\n $b"],
      ["DOUBLE", 'line\nnext "q" \\ $'],
    ]);
  });

  it("handles CRLF line ends", () => {
    expect([...parseEnvFile("A=1\r\nB=2\r\n")]).toEqual([
      ["A", "1"],
      ["B", "2"],
    ]);
  });

  it("rejects a malformed line by number, without echoing it", () => {
    const secret = "hunter2-value";
    for (const text of [`A=1\n${secret}`, `A=1\n=${secret}`, `A=1\nB="\\q${secret}"`]) {
      let caught: unknown;
      try {
        parseEnvFile(text, "f.env");
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(UsageError);
      expect((caught as Error).message).toMatch(/^f\.env:2: /);
      expect((caught as Error).message).not.toContain(secret);
    }
  });
});
