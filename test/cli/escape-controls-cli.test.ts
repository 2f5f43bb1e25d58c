/**
 * The interlinear annotation characters (U+FFF9–FFFB, format characters that
 * hide the text between them on some terminals) in a context key reach the
 * command's output escaped, never raw: `explain`'s table and JSON, and
 * `run`'s refusal on stderr. Written against what the user sees, not
 * against escapeControls' source, so it holds whatever function escapes
 * them (a range list today, Unicode properties later): any `\u` spelling of
 * the code point is accepted. Issue 27, item 9: no test held these.
 *
 * Seen red with `npm run test:mutants -- --only escape-interlinear-annotations`.
 */
import { afterAll, describe, expect, it } from "vitest";
import { cli, scratch } from "../helpers/run-cli.js";

const RAW = /[\ufff9-\ufffb]/;
const ANNOTATION = ["\ufff9", "\ufffa", "\ufffb"];

/** `\ufff9`, `\uFFF9` or `\u{fff9}`. */
function escaped(char: string): RegExp {
  const hex = char.codePointAt(0)!.toString(16);
  return new RegExp(`\\\\u(\\{0*${hex}\\}|${hex})`, "i");
}

describe("command output: interlinear annotation characters", () => {
  const tmp = scratch();
  afterAll(() => tmp.remove());
  const key = `shown\ufff9hidden\ufffaannotation\ufffbKEY`;
  const file = tmp.write("context.json", JSON.stringify({ [key]: "v" }));

  it("explain's table and JSON show them escaped", () => {
    const table = cli(["explain", "--context-file", file, "--", "true"]);
    expect(table.status).toBe(0);
    expect(table.stdout).not.toMatch(RAW);
    for (const char of ANNOTATION) expect(table.stdout).toMatch(escaped(char));
    const json = cli(["explain", "--json", "--context-file", file, "--", "true"]);
    expect(json.status).toBe(0);
    expect(json.stdout).not.toMatch(RAW);
    const names = (JSON.parse(json.stdout) as { variables: { name: string }[] }).variables.map(
      (v) => v.name,
    );
    // The oracle: the name itself still holds them; only the printing escapes.
    expect(names).toContain(`CTX_${key.toUpperCase()}`);
  });

  it("run's refusal on stderr shows them escaped", () => {
    const run = cli(["run", "--var", `${key}=1`, "--", "true"]);
    expect(run.status).toBe(2);
    expect(run.stderr).not.toMatch(RAW);
    for (const char of ANNOTATION) expect(run.stderr).toMatch(escaped(char));
  });
});
