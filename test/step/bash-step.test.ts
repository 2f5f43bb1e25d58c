/**
 * runtime.bash end to end against the real kernel (issue #5 "Must show"):
 * byte-identical round trips under `set -euo pipefail`, the spill
 * directory's privacy and cleanup, the nested canary, parallel isolation,
 * the 64 KiB rule and the retired per-step size field. Runs in both projects
 * (native engine and child_process fallback).
 */
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { envPairBytes, PER_VALUE_ENV_CAP } from "../../src/limits.js";
import { setLogger } from "../../src/log.js";
import { createRuntime } from "../../src/runtime.js";
import { captureLog } from "../helpers/capture-log.js";
import { leftovers, makeRootFactory, rejection, sha256 } from "../helpers/steps.js";

const { root, removeRoots } = makeRootFactory();
afterAll(removeRoots);
afterEach(() => setLogger(undefined));

const KIB = 1024;
const MIB = 1024 * KIB;
const SENTINEL = "SENTINEL-5e17";

/** The value length that makes `NAME=value\0` exactly `bytes` long (ASCII). */
function lengthFor(name: string, bytes: number): number {
  return bytes - envPairBytes(name, "");
}

/** Prints, one per line, the sha256 of each named variable as the script sees it. */
function digestScript(names: readonly string[]): string {
  const lines = names.map((name) => `printf %s "$${name}" | sha256sum | cut -c1-64`);
  return ["set -euo pipefail", ...lines].join("\n");
}

const special = [
  `it's "quoted" and 'single' \\ back\\slash`,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, deliberately not a template
  "$(echo pwned) `echo pwned` ${HOME} $HOME $((1+1)) !! $0 $@",
  "* ? [a-z] ~ ; && || | > /tmp/x < /dev/null & #comment",
  "line one\nline two\n\nline four",
  "trailing newlines\n\n\n",
  "   leading and trailing spaces   ",
  "\ttabs\t and \r carriage returns \r",
  "non-ASCII: é ü 漢字 🙂 \u00a0 \u2028",
  "-n -e %s %d %%",
].join("\n--\n");

const cases: readonly { label: string; value: string }[] = [
  { label: "0 B", value: "" },
  { label: "1 B", value: "y" },
  ...[-1, 0, 1].flatMap((delta) => [
    {
      label: `RECIPE_VAR_x at the cap ${delta >= 0 ? "+" : ""}${delta}`,
      value: "r".repeat(lengthFor("RECIPE_VAR_x", PER_VALUE_ENV_CAP + delta)),
    },
    {
      label: `X at the cap ${delta >= 0 ? "+" : ""}${delta}`,
      value: "a".repeat(lengthFor("X", PER_VALUE_ENV_CAP + delta)),
    },
  ]),
  { label: "200 KiB", value: "b".repeat(200 * KIB) },
  { label: "1 MiB", value: "c".repeat(MIB) },
  { label: "5 MiB", value: "d".repeat(5 * MIB) },
  { label: "special characters (small, inline)", value: special },
  {
    label: "special characters (large, spilled)",
    value: `${special}\n`.repeat(Math.ceil((200 * KIB) / special.length)),
  },
  { label: "only newlines", value: "\n\n\n" },
];

describe("round trip under set -euo pipefail", () => {
  const runtime = createRuntime({ preset: "recipe-runner-compat" });

  it.each(cases)("$label reaches the script byte-identical under both names", async ({ value }) => {
    const tmp = root();
    const result = await runtime.bash(digestScript(["RECIPE_VAR_x", "X"]), {
      values: { x: value },
      tmpdir: tmp,
    });
    const expected = sha256(value);
    expect(result.stdout).toBe(`${expected}\n${expected}\n`);
    // Spilled exactly when its own NAME=value\0 is over the cap (no budget pressure here).
    const spilled = result.spilled.map((s) => s.name).sort();
    const overCap = ["RECIPE_VAR_x", "X"].filter(
      (name) => envPairBytes(name, value) > PER_VALUE_ENV_CAP,
    );
    expect(spilled).toEqual(overCap.sort());
    expect(result.dropped).toEqual([]);
    expect(leftovers(tmp)).toEqual([]);
  });

  it("the cap boundary is measured per name: only the longer name spills", async () => {
    const value = "z".repeat(lengthFor("RECIPE_VAR_x", PER_VALUE_ENV_CAP + 1));
    const plan = runtime.planBash("true", { values: { x: value } });
    expect(plan.spill.spilled.map((s) => s.name)).toEqual(["RECIPE_VAR_x"]);
    expect(envPairBytes("X", value)).toBeLessThanOrEqual(PER_VALUE_ENV_CAP);
  });

  it("a value under `_` is never spilled (bash overwrites $_ after every command)", async () => {
    const value = "u".repeat(200 * KIB);
    const result = await runtime.bash(digestScript(["RECIPE_VAR__"]), {
      values: { _: value },
      tmpdir: root(),
    });
    expect(result.output).toBe(sha256(value));
    expect(result.spilled.map((s) => s.name)).toEqual(["RECIPE_VAR__"]);
    expect(result.dropped.map((d) => d.name)).toEqual(["_"]);
  });

  it("20 values of 300 KiB each reach the script under both names", async () => {
    const tmp = root();
    const values: Record<string, string> = {};
    for (let i = 0; i < 20; i++) values[`v${i}`] = `${i}:${"w".repeat(300 * KIB)}:${i}`;
    const names = Object.keys(values).flatMap((key) => [`RECIPE_VAR_${key}`, key.toUpperCase()]);
    const result = await runtime.bash(digestScript(names), { values, tmpdir: tmp });
    const expected = Object.values(values).flatMap((v) => [sha256(v), sha256(v)]);
    expect(result.output.split("\n")).toEqual(expected);
    expect(result.spilled).toHaveLength(40);
    expect(leftovers(tmp)).toEqual([]);
  });

  it("a nested object value reaches the script as JSON and per key", async () => {
    const report = { summary: "s".repeat(200 * KIB), count: 3 };
    const result = await runtime.bash(
      digestScript(["RECIPE_VAR_report", "RECIPE_VAR_report__summary", "REPORT"]),
      { values: { report }, tmpdir: root() },
    );
    const json = sha256(JSON.stringify(report));
    expect(result.stdout).toBe(`${json}\n${sha256(report.summary)}\n${json}\n`);
  });
});

/** The step's own spill directory, read from the preamble in its argv (inline mode). */
const OWN_SPILL_DIR =
  'd=$(tr "\\0" "\\n" </proc/$$/cmdline | grep -o "$TMPROOT/exactspawn-spill-[A-Za-z0-9]*" | head -n1)';

describe("spill files", () => {
  const runtime = createRuntime({ preset: "recipe-runner-compat" });
  const big = `${SENTINEL}:${"s".repeat(300 * KIB)}`;

  it("live in a fresh 0700 directory under tmpdir, files 0600, removed after success", async () => {
    const tmp = root();
    const result = await runtime.bash(
      `set -euo pipefail\n${OWN_SPILL_DIR}\nstat -c '%a %n' "$d" "$d"/*\nls -ld "$TMPROOT"/exactspawn-spill-* | wc -l`,
      { values: { big }, extra: { TMPROOT: tmp }, tmpdir: tmp },
    );
    const lines = result.output.split("\n");
    const [dirLine, ...rest] = lines;
    expect(dirLine).toMatch(new RegExp(`^700 ${tmp}/exactspawn-spill-[A-Za-z0-9]{6}$`));
    const files = rest.slice(0, -1);
    expect(files).toHaveLength(2);
    for (const line of files) expect(line).toMatch(/^600 \S+\/v[01]$/);
    expect(rest.at(-1)).toBe("1");
    expect(leftovers(tmp)).toEqual([]);
  });

  it("is removed after a failing step (exit 3)", async () => {
    const tmp = root();
    const error = await rejection(
      runtime.bash('ls -d "$TMPROOT"/exactspawn-spill-* >/dev/null\nexit 3', {
        values: { big },
        extra: { TMPROOT: tmp },
        tmpdir: tmp,
      }),
    );
    expect(error).toMatchObject({ name: "SubprocessError", exitCode: 3, reason: "exit" });
    expect(leftovers(tmp)).toEqual([]);
  });

  it("is removed after a timeout", async () => {
    const tmp = root();
    const error = await rejection(
      runtime.bash("sleep 30", { values: { big }, tmpdir: tmp, timeout: 200 }),
    );
    expect(error).toMatchObject({ name: "SubprocessError", reason: "timeout" });
    expect(leftovers(tmp)).toEqual([]);
  });

  it("is removed after an abort while the step runs", async () => {
    const tmp = root();
    const marks = root();
    const controller = new AbortController();
    const running = runtime.bash(': > "$MARKS/started"; sleep 30', {
      values: { big },
      extra: { MARKS: marks },
      tmpdir: tmp,
      signal: controller.signal,
    });
    for (let i = 0; i < 500 && !existsSync(join(marks, "started")); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(existsSync(join(marks, "started"))).toBe(true);
    expect(leftovers(tmp)).toHaveLength(1);
    controller.abort();
    const error = await rejection(running);
    expect(error).toMatchObject({ name: "SubprocessError", reason: "abort" });
    expect(leftovers(tmp)).toEqual([]);
  });

  it("a symlink planted in TMPDIR is never followed", async () => {
    const tmp = root();
    const victim = root();
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const planted: string[] = [];
    for (let i = 0; i < 200; i++) {
      let suffix = "";
      for (let j = 0; j < 6; j++) suffix += alphabet[Math.floor(Math.random() * alphabet.length)];
      for (const prefix of ["exactspawn-spill-", "exactspawn-script-"]) {
        const link = join(tmp, `${prefix}${suffix}`);
        if (!planted.includes(link)) {
          symlinkSync(victim, link);
          planted.push(link);
        }
      }
    }
    for (const name of ["v0", "v1", "script.sh"]) symlinkSync(join(victim, name), join(tmp, name));
    for (let i = 0; i < 10; i++) {
      const result = await runtime.bash(
        `: '${"c".repeat(70 * KIB)}'\nprintf %s "$RECIPE_VAR_big" | sha256sum | cut -c1-64`,
        { values: { big }, tmpdir: tmp },
      );
      expect(result.output).toBe(sha256(big));
      expect(result.scriptMode).toBe("file");
    }
    expect(readdirSync(victim)).toEqual([]);
    // Only the planted links are left; every step's own directory is gone.
    expect(readdirSync(tmp).length).toBe(planted.length + 3);
  });
});

describe("the nested canary (context export)", () => {
  it("a set -u step and its grandchild read TASK_DESCRIPTION, a bare name the host declared", async () => {
    const runtime = createRuntime({ bareNames: ["TASK_DESCRIPTION", "REPO_PATH"] });
    const task = `Fix "the" bug; it's $(not) run\nsecond line`;
    const result = await runtime.bash(
      `set -u\nprintf '%s\\n' "$TASK_DESCRIPTION"\nsh -c 'set -u; echo "$TASK_DESCRIPTION"'`,
      { context: { task_description: task, repo_path: "/repo" }, tmpdir: root() },
    );
    expect(result.stdout).toBe(`${task}\n${task}\n`);
  });
});

describe("parallel steps", () => {
  it("16 steps at once each read back their own value from their own spill directory", async () => {
    const runtime = createRuntime({ preset: "recipe-runner-compat" });
    const tmp = root();
    const values = Array.from({ length: 16 }, (_, i) => `${i}|${String(i).repeat(150 * KIB)}|${i}`);
    const results = await Promise.all(
      values.map((value) =>
        runtime.bash(
          `set -euo pipefail\n${OWN_SPILL_DIR}\necho "$d"\nprintf %s "$RECIPE_VAR_mine" | sha256sum | cut -c1-64\nprintf %s "$MINE" | sha256sum | cut -c1-64`,
          { values: { mine: value }, extra: { TMPROOT: tmp }, tmpdir: tmp },
        ),
      ),
    );
    const dirs = new Set<string>();
    results.forEach((result, i) => {
      const [dir, primary, alias] = result.output.split("\n");
      expect(dir).toMatch(/exactspawn-spill-[A-Za-z0-9]{6}$/);
      dirs.add(dir!);
      expect(primary).toBe(sha256(values[i]!));
      expect(alias).toBe(sha256(values[i]!));
    });
    expect(dirs.size).toBe(16);
    expect(leftovers(tmp)).toEqual([]);
  });
});

describe("the 64 KiB rule", () => {
  it("a command + preamble over 64 KiB runs from a private file without the spilled values", async () => {
    const runtime = createRuntime({ preset: "recipe-runner-compat" });
    const tmp = root();
    const padding = `: '${"p".repeat(64 * KIB)}'`;
    const result = await runtime.bash(
      `set -euo pipefail\n${padding}\necho "$0"\nstat -c %a "$0" "$(dirname "$0")"\nif grep -q "${SENTINEL.slice(0, 5)}""${SENTINEL.slice(5)}" "$0"; then echo leaked; else echo clean; fi\nprintf %s "$RECIPE_VAR_big" | sha256sum | cut -c1-64`,
      { values: { big: `${SENTINEL}${"q".repeat(200 * KIB)}` }, tmpdir: tmp },
    );
    expect(result.scriptMode).toBe("file");
    const [path, fileMode, dirMode, clean, digest] = result.output.split("\n");
    expect(path).toMatch(new RegExp(`^${tmp}/exactspawn-script-[A-Za-z0-9]{6}/script\\.sh$`));
    expect([fileMode, dirMode]).toEqual(["600", "700"]);
    expect(clean).toBe("clean");
    expect(digest).toBe(sha256(`${SENTINEL}${"q".repeat(200 * KIB)}`));
    expect(existsSync(path!)).toBe(false);
    expect(leftovers(tmp)).toEqual([]);
  });

  it("the rule applies to the combined script: a command just under 64 KiB plus a preamble goes to a file", async () => {
    const runtime = createRuntime({ preset: "recipe-runner-compat" });
    const command = `: '${"p".repeat(64 * KIB - 200)}'`;
    expect(runtime.planBash(command).scriptMode).toBe("inline");
    const plan = runtime.planBash(command, {
      values: Object.fromEntries(
        Array.from({ length: 8 }, (_, i) => [`v${i}`, "x".repeat(PER_VALUE_ENV_CAP)]),
      ),
    });
    expect(plan.spill.spilled.length).toBeGreaterThan(0);
    expect(plan.scriptMode).toBe("file");
  });
});

describe("retired maxEnvValueBytes", () => {
  it("is accepted, ignored and warned about once per step name", async () => {
    const capture = captureLog();
    const runtime = createRuntime({ preset: "recipe-runner-compat", logger: capture.logger });
    const value = "m".repeat(200 * KIB);
    const run = (step: string) =>
      runtime.bash('printf %s "$RECIPE_VAR_x" | wc -c', {
        values: { x: value },
        step,
        maxEnvValueBytes: 65_536,
        tmpdir: root(),
      });
    const first = await run("checkpoint-3");
    // Ignored: the whole value arrives (spilled, never truncated).
    expect(first.output).toBe(String(value.length));
    await run("checkpoint-3");
    await run("checkpoint-4");
    const warnings = capture
      .events()
      .filter((event) => event["field"] === "maxEnvValueBytes")
      .map((event) => event["step"]);
    expect(warnings).toEqual(["checkpoint-3", "checkpoint-4"]);
    expect(capture.lines.join("\n")).not.toContain("65536");
  });

  it("planBash shares the runtime's memory; runtimes do not share it", () => {
    const capture = captureLog();
    const one = createRuntime({ preset: "recipe-runner-compat", logger: capture.logger });
    const two = createRuntime({ preset: "recipe-runner-compat", logger: capture.logger });
    one.planBash("true", { step: "s", maxEnvValueBytes: 1 });
    one.planBash("true", { step: "s", maxEnvValueBytes: 1 });
    two.planBash("true", { step: "s", maxEnvValueBytes: 1 });
    two.planBash("true", { step: "t" });
    expect(capture.events().filter((e) => e["field"] === "maxEnvValueBytes")).toHaveLength(2);
  });
});

describe("a missing spill root", () => {
  it("fails before spawning with a SpillError and leaves nothing behind", async () => {
    const runtime = createRuntime({ preset: "recipe-runner-compat" });
    const tmp = root();
    const missing = join(tmp, "missing");
    const error = await rejection(
      runtime.bash("echo ran", { values: { x: "x".repeat(200 * KIB) }, tmpdir: missing }),
    );
    expect(error).toMatchObject({ name: "SpillError", code: "ERR_EXACTSPAWN_SPILL_WRITE" });
    mkdirSync(missing);
    expect(readdirSync(missing)).toEqual([]);
  });
});
