/**
 * `exactspawn run` as a user would: the step's output and exit status pass
 * through, a 1 MiB @file value arrives intact, --verbose shows the plan
 * without a value, usage errors exit 2 with one line.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/native.js";
import { cli, scratch } from "../helpers/run-cli.js";

const ENV_FILE = join(PACKAGE_ROOT, "test/fixtures/cli/parent.env");
const MARKER = "sentinel-b41d";
const tmp = scratch();
afterAll(() => tmp.remove());

describe("exactspawn run", () => {
  it("passes the step's stdout, stderr and exit status through", () => {
    const ok = cli(["run", "--", "echo out; echo err >&2"]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toBe("out\n");
    expect(ok.stderr).toBe("err\n");
    expect(cli(["run", "--", "exit 7"]).status).toBe(7);
    expect(cli(["run", "--", "exit", "3"]).status).toBe(3); // words joined into one script
  });

  it("streams the step's output as it is written, not after the step ends", async () => {
    // The step never ends by itself: its first line arriving at all proves it
    // was streamed (an order of events, not a time).
    const child = spawn(process.execPath, ["dist/cli.js", "run", "--", "echo first; sleep 1000"], {
      cwd: PACKAGE_ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on("exit", (code) => resolve(code)),
    );
    // "" when the command ends without a line (its failure is then the test's).
    const first = await new Promise<string>((resolve) => {
      child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString()));
      child.once("exit", () => resolve(""));
    });
    try {
      expect(first).toBe("first\n");
      expect(child.exitCode).toBeNull();
    } catch (error) {
      child.kill("SIGTERM"); // a red test leaves no `sleep 1000` behind
      throw error;
    }
    child.kill("SIGTERM"); // forwarded: the step's group is stopped, and we exit 128 + 15
    expect(await exited).toBe(143);
  });

  it("turns a signal into 128 + n, and --timeout into 124", () => {
    expect(cli(["run", "--", "kill -KILL $$"]).status).toBe(137);
    expect(cli(["run", "--", "kill -TERM $$"]).status).toBe(143);
    const slow = cli(["run", "--timeout", "0.3", "--", "sleep 30"]);
    expect(slow.status).toBe(124);
    expect(slow.stderr).toBe("exactspawn run: the step timed out after 300 ms (--timeout 0.3)\n");
  });

  it("--timeout takes units (issue 39, item 3): 300ms, 1.5s, 2m; --verbose says which", () => {
    const ms = cli(["run", "--timeout", "300ms", "--", "sleep 30"]);
    expect(ms.status).toBe(124);
    expect(ms.stderr).toBe("exactspawn run: the step timed out after 300 ms (--timeout 300ms)\n");
    const verbose = cli(["run", "--verbose", "--timeout", "2m", "--", "true"]);
    expect(verbose.status).toBe(0);
    expect(verbose.stderr).toMatch(/^timeout: 2 min \(120000 ms\)$/m);
    const none = cli(["run", "--verbose", "--", "true"]);
    expect(none.stderr).toMatch(/^timeout: none$/m);
    const help = cli(["run", "--help"]);
    expect(help.stdout).toContain("--timeout DURATION");
    expect(help.stdout).toContain(
      "--timeout 30 is 30 seconds, --timeout 300ms is 300 milliseconds",
    );
  });

  it("passes a 1 MiB --var @file value intact (spilled, sha256 inside = outside)", () => {
    const value = `${MARKER}${"0123456789abcdef".repeat(65_536)}`.slice(0, 1 << 20);
    const file = tmp.write("big.txt", value);
    const outside = createHash("sha256").update(value).digest("hex");
    const run = cli([
      "run",
      "--var",
      `report=@${file}`,
      "--",
      'printf %s "$RECIPE_VAR_report" | sha256sum; printf %s "$RECIPE_VAR_report" | wc -c',
    ]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const [sum, bytes] = run.stdout.trim().split("\n");
    expect(sum).toBe(`${outside}  -`);
    expect(Number(bytes)).toBe(1 << 20);
  });

  it("uses --env-file as the parent environment and --context/--var as layers", () => {
    const run = cli([
      "run",
      "--env-file",
      ENV_FILE,
      "--inherit",
      "all",
      "--block",
      "SERVICE_TOKEN",
      "--context",
      "ticket=T-1",
      "--var",
      "count=3",
      "--",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion
      'printf "%s|%s|%s|%s|%s\\n" "$HOME" "$CTX_TICKET" "$RECIPE_VAR_count" "${SERVICE_TOKEN-unset}" "$EDITOR"',
    ]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("/home/fixture|T-1|3|unset|vim -n\n");
  });

  it("prints the plan to stderr with --verbose, never a value", () => {
    const quiet = cli([
      "run",
      "--verbose",
      "--log-level",
      "debug",
      "--var",
      `secret=${MARKER}`,
      "--context",
      `note=${MARKER}`,
      "--",
      "true",
    ]);
    expect(quiet.status).toBe(0);
    expect(quiet.stderr).toMatch(/RECIPE_VAR_secret\s+inline\s+step/);
    expect(quiet.stderr).toMatch(/budget\s+\[/);
    expect(quiet.stderr + quiet.stdout).not.toContain(MARKER);
    // Only the step's own output can carry it.
    const echo = cli([
      "run",
      "--verbose",
      "--var",
      `secret=${MARKER}`,
      "--",
      'echo "$RECIPE_VAR_secret"',
    ]);
    expect(echo.stdout).toBe(`${MARKER}\n`);
    expect(echo.stderr).not.toContain(MARKER);
  });

  it("reads stdin when it is not a terminal", () => {
    expect(cli(["run", "--", "tr a-z A-Z"], { input: "piped\n" }).stdout).toBe("PIPED\n");
  });

  it("exits 125 with one line when the step cannot be planned", () => {
    const tight = tmp.write(
      "tight.env",
      `PATH=/usr/bin:/bin:${"/x".repeat(400)}\nEXACTSPAWN_BASH=/bin/bash\n`,
    );
    const run = cli(["run", "--env-file", tight, "--exec-limit", "512", "--", "true"]);
    expect(run.status).toBe(125);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    const missing = tmp.write("nobash.env", "PATH=/nonexistent\n");
    expect(cli(["run", "--env-file", missing, "--", "true"]).status).toBe(125);
  });

  it("answers --help and exits 2 with one line for usage errors", () => {
    const help = cli(["run", "--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: exactspawn run/);
    for (const args of [
      [],
      ["--"],
      ["--bogus", "--", "true"],
      ["--timeout", "soon", "--", "true"],
      ["--var", MARKER, "--", "true"],
      ["--exec-limit", "64M", "--", "true"],
    ]) {
      const run = cli(["run", ...args]);
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).not.toContain(MARKER);
    }
  });
});

/**
 * Issue 21, finding 8: twenty 120 kB --context-file values started the step
 * with 17 of them, exit 0 and nothing on stderr. Every value the budget gives
 * up is named and the run exits 2 (docs/cli.md); --allow-skips runs without.
 * Seen red on the old code (exit 0, empty stderr).
 */
describe("exactspawn run: context given up for the budget", () => {
  const context = Object.fromEntries(
    Array.from({ length: 20 }, (_, i) => [
      `blob_${String(i).padStart(2, "0")}`,
      `${i}`.padEnd(120_000, "c"),
    ]),
  );
  const file = tmp.write("big-context.json", JSON.stringify(context));

  it("exits 2 naming every value that would not reach the step", () => {
    const run = cli(["run", "--context-file", file, "--exec-limit", "256K", "--", "echo ran"]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    const named = [...run.stderr.matchAll(/--context (blob_\d+) \(aggregate_env_budget\)/g)].map(
      (m) => m[1],
    );
    expect(named.length).toBeGreaterThan(0);
    // 256 KiB (the floor, valid on both engines) holds one or two: every other one is named.
    const plan = cli([
      "explain",
      "--context-file",
      file,
      "--exec-limit",
      "256K",
      "--json",
      "--",
      "true",
    ]);
    const skipped = (
      JSON.parse(plan.stdout) as { variables: { name: string; fate: string }[] }
    ).variables
      .filter((v) => v.fate === "skipped")
      .map((v) => v.name.replace(/^CTX_/, "").toLowerCase());
    expect(named.sort()).toEqual(skipped.sort());
    expect(run.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    expect(run.stderr).not.toContain("cccccccc");
  });

  it("--allow-skips runs the step with the values that fit", () => {
    const run = cli([
      "run",
      "--allow-skips",
      "--context-file",
      file,
      "--exec-limit",
      "256K",
      "--",
      "echo ran",
    ]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("ran\n");
  });
});

describe("exactspawn run --sandbox", () => {
  it.runIf(process.env["EXACTSPAWN_NATIVE"] !== "0")(
    "runs the step confined: writes only beneath --writable",
    () => {
      const dir = scratch();
      try {
        const inside = join(dir.dir, "inside");
        mkdirSync(inside);
        const run = cli([
          "run",
          "--writable",
          inside,
          "--",
          `touch ${inside}/ok && echo wrote; touch ${dir.dir}/outside || echo refused`,
        ]);
        expect(run.stdout).toBe("wrote\nrefused\n");
        expect(run.status).toBe(0);
        expect(existsSync(join(inside, "ok"))).toBe(true);
        expect(existsSync(join(dir.dir, "outside"))).toBe(false);
      } finally {
        dir.remove();
      }
    },
  );

  it("names the sandbox options in --help and refuses an unknown one with a hint", () => {
    expect(cli(["run", "--help"]).stdout).toMatch(/--sandbox[\s\S]*--writable DIR/);
    const typo = cli(["run", "--writeable", "/tmp", "--", "true"]);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('did you mean "--writable"?');
  });
});
