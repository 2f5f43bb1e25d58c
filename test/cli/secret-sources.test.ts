/**
 * Values that never appear in argv: `--var`/`--context` NAME=@FILE and
 * NAME=@- (stdin, at most once), and `--context-file FILE.json`. Each case
 * runs the real command and checks what the step's bash really received,
 * the exit status, and the exact one-line message of each refusal (which
 * never contains the value or the file's content).
 *
 * Control check (done once, by hand): with StdinSource's second-use guard
 * removed, the "second @-" case went red; with readContextFile's string
 * check removed, the non-string --context-file case went red.
 */
import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { cli, scratch } from "../helpers/run-cli.js";

const MARKER = "sentinel-c0de";
const tmp = scratch();
afterAll(() => tmp.remove());

/** One line on stderr, exactly `line`, exit status 2, and no marker anywhere. */
function expectUsage(args: string[], line: string, input?: string): void {
  const run = cli(args, input === undefined ? {} : { input });
  expect(run.status, args.join(" ")).toBe(2);
  expect(run.stderr).toBe(`${line}\n`);
  expect(run.stdout + run.stderr).not.toContain(MARKER);
}

describe("values from files and stdin, not argv", () => {
  it("--var NAME=@- and --context KEY=@FILE reach the step byte for byte", () => {
    const file = tmp.write("ticket.txt", `${MARKER}-ticket\nline 2`);
    const run = cli(
      [
        "run",
        "--allow",
        "PATH",
        "--var",
        "token=@-",
        "--context",
        `ticket=@${file}`,
        "--",
        'printf "%s|" "$RECIPE_VAR_token"; printf "%s|" "$CTX_TICKET"; cat',
      ],
      { input: `${MARKER}-token\n` },
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    // stdin was used up by @-: the step gets no stdin of ours (cat prints nothing).
    expect(run.stdout).toBe(`${MARKER}-token\n|${MARKER}-ticket\nline 2|`);
  });

  it("--context KEY=@@text is the literal @text", () => {
    const run = cli(["run", "--context", "handle=@@me", "--", 'printf %s "$CTX_HANDLE"']);
    expect(run.stdout).toBe("@me");
  });

  it("refuses a second @- with one line", () => {
    expectUsage(
      ["run", "--var", "a=@-", "--var", "b=@-", "--", "true"],
      "exactspawn run: --var b: stdin is already read for --var a; at most one value may come from @-",
      `${MARKER}\n`,
    );
    expectUsage(
      ["explain", "--context", "a=@-", "--var", "b=@-"],
      "exactspawn explain: --var b: stdin is already read for --context a; at most one value may come from @-",
      `${MARKER}\n`,
    );
  });

  it("refuses a file that is not UTF-8, and a missing @FILE, naming the option", () => {
    const binary = tmp.write("binary.bin", "");
    writeFileSync(binary, Buffer.from([0xff, 0xfe]));
    expectUsage(
      ["run", "--context", `blob=@${binary}`, "--", "true"],
      `exactspawn run: --context blob: ${binary} is not valid UTF-8`,
    );
    expectUsage(
      ["run", "--var", `a=@${tmp.dir}/missing`, "--", "true"],
      `exactspawn run: --var a: cannot read ${tmp.dir}/missing (ENOENT)`,
    );
  });

  it("--context-file: a JSON object of strings, later --context entries win", () => {
    const file = tmp.write(
      "context.json",
      JSON.stringify({ ticket: `${MARKER}-1`, owner: "ops", __proto__: "p" }),
    );
    const run = cli([
      "run",
      "--context-file",
      file,
      "--context",
      "owner=dev",
      "--",
      'printf "%s|%s" "$CTX_TICKET" "$CTX_OWNER"',
    ]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(`${MARKER}-1|dev`);
  });

  it("--context-file refuses non-string values, non-objects and bad JSON without quoting them", () => {
    const numbers = tmp.write("numbers.json", JSON.stringify({ ok: "x", count: 3 }));
    expectUsage(
      ["explain", "--context-file", numbers],
      `exactspawn explain: --context-file ${numbers}: the value of "count" is a JSON number; every value must be a string`,
    );
    const nested = tmp.write("nested.json", JSON.stringify({ deep: { secret: MARKER } }));
    expectUsage(
      ["explain", "--context-file", nested],
      `exactspawn explain: --context-file ${nested}: the value of "deep" is a JSON object; every value must be a string`,
    );
    const list = tmp.write("list.json", JSON.stringify([MARKER]));
    expectUsage(
      ["explain", "--context-file", list],
      `exactspawn explain: --context-file ${list}: expected a JSON object of string values`,
    );
    // Node's own JSON.parse message would quote the text around the error.
    const broken = tmp.write("broken.json", `{"token": "${MARKER}`);
    expectUsage(
      ["explain", "--context-file", broken],
      `exactspawn explain: --context-file ${broken}: not valid JSON`,
    );
  });
});
