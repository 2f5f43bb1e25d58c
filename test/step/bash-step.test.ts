/**
 * runtime.bash end to end against the real kernel (issue #5 "Must show"):
 * byte-identical round trips under `set -euo pipefail`, the spill
 * directory's privacy and cleanup, the nested canary, parallel isolation,
 * the 64 KiB rule and the retired per-step size field. Runs in both projects
 * (native engine and child_process fallback).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { envPairBytes, PER_VALUE_ENV_CAP } from "../../src/limits.js";
import { setLogger } from "../../src/log.js";
import { nativeBinding } from "../../src/native.js";
import { createRuntime } from "../../src/runtime.js";
import { captureLog } from "../helpers/capture-log.js";
import { makeRootFactory, rejection, sha256 } from "../helpers/steps.js";

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
    expect(readdirSync(tmp)).toEqual([]);
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
    expect(readdirSync(tmp)).toEqual([]);
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

/** Every descriptor of the step's shell and of a grandchild, as readlink shows them. */
const DESCRIPTORS =
  'for f in /proc/$$/fd/*; do readlink "$f" || :; done\nsh -c \'for f in /proc/$$/fd/*; do readlink "$f" || :; done\'';

/** A link to a spill descriptor: a memfd, or a file that has no name any more. */
const SPILL_LINK = /memfd:|\(deleted\)|exactspawn/;

describe("spill descriptors", () => {
  const runtime = createRuntime();
  const big = `${SENTINEL}:${"s".repeat(300 * KIB)}`;

  it("the step reads its value, nothing appears in TMPDIR, and neither the step's command nor a grandchild holds the descriptor", async () => {
    // Breaking the control: without the preamble's `exec 3<&-` the step's
    // shell and its grandchild list the memfd / deleted file (seen red, restored).
    const tmp = root();
    const result = await runtime.bash(
      `set -euo pipefail\nprintf %s "$RECIPE_VAR_big" | sha256sum | cut -c1-64\nls -A "$TMPROOT" | wc -l\n${DESCRIPTORS}`,
      { values: { big }, extra: { TMPROOT: tmp }, tmpdir: tmp },
    );
    const [digest, entries, ...links] = result.output.split("\n");
    expect(digest).toBe(sha256(big));
    expect(entries).toBe("0");
    expect(links.length).toBeGreaterThan(4);
    expect(links.filter((link) => SPILL_LINK.test(link))).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("a failing step (exit 3), a timeout and an abort leave nothing behind", async () => {
    const tmp = root();
    const failed = await rejection(runtime.bash("exit 3", { values: { big }, tmpdir: tmp }));
    expect(failed).toMatchObject({ name: "SubprocessError", exitCode: 3, reason: "exit" });
    const timedOut = await rejection(
      runtime.bash("sleep 30", { values: { big }, tmpdir: tmp, timeout: 200 }),
    );
    expect(timedOut).toMatchObject({ name: "SubprocessError", reason: "timeout" });
    const controller = new AbortController();
    const running = runtime.bash("echo started; sleep 30", {
      values: { big },
      tmpdir: tmp,
      signal: controller.signal,
    });
    // Once the step runs (an event), not after 200 ms it might not have had.
    for await (const _line of running.lines()) break;
    controller.abort();
    expect(await rejection(running)).toMatchObject({ name: "SubprocessError", reason: "abort" });
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("a missing TMPDIR matters only where a file is needed: memfd runs, the fallback refuses with a SpillError", async () => {
    const tmp = root();
    const missing = join(tmp, "missing");
    const step = runtime.bash('printf %s "$RECIPE_VAR_x" | wc -c', {
      values: { x: "x".repeat(200 * KIB) },
      tmpdir: missing,
    });
    if (nativeBinding()?.sealedMemfd !== undefined) {
      expect((await step).output).toBe(String(200 * KIB));
    } else {
      const error = await rejection(step);
      expect(error).toMatchObject({
        name: "SpillError",
        code: "ERR_EXACTSPAWN_SPILL_WRITE",
        ioCode: "ENOENT",
      });
    }
    expect(existsSync(missing)).toBe(false);
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
  it("16 steps at once each read back their own value (and its declared alias)", async () => {
    const runtime = createRuntime({ bareNames: ["MINE"] });
    const tmp = root();
    const values = Array.from({ length: 16 }, (_, i) => `${i}|${String(i).repeat(150 * KIB)}|${i}`);
    const results = await Promise.all(
      values.map((value) =>
        runtime.bash(
          `set -euo pipefail\nprintf %s "$RECIPE_VAR_mine" | sha256sum | cut -c1-64\nprintf %s "$MINE" | sha256sum | cut -c1-64`,
          { values: { mine: value }, tmpdir: tmp },
        ),
      ),
    );
    results.forEach((result, i) => {
      expect(result.output.split("\n")).toEqual([sha256(values[i]!), sha256(values[i]!)]);
    });
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe("the 64 KiB rule", () => {
  it("a command + preamble over 64 KiB runs from a descriptor: $0 is bash, the descriptor is closed, nothing on disk", async () => {
    const runtime = createRuntime();
    const tmp = root();
    const padding = `: '${"p".repeat(64 * KIB)}'`;
    const value = `${SENTINEL}${"q".repeat(200 * KIB)}`;
    const result = await runtime.bash(
      `set -euo pipefail\n${padding}\necho "$0"\nprintf %s "$RECIPE_VAR_big" | sha256sum | cut -c1-64\nls -A "$TMPROOT" | wc -l\n${DESCRIPTORS}`,
      { values: { big: value }, extra: { TMPROOT: tmp }, tmpdir: tmp },
    );
    expect(result.scriptMode).toBe("file");
    const [zero, digest, entries, ...links] = result.output.split("\n");
    expect(zero).toBe(result.interpreter);
    expect(digest).toBe(sha256(value));
    expect(entries).toBe("0");
    expect(links.filter((link) => SPILL_LINK.test(link))).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("the rule applies to the combined script: a command just under 64 KiB plus a preamble goes through a descriptor", async () => {
    const runtime = createRuntime();
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
        maxEnvValueBytes: 7_340_033,
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
    expect(capture.lines.join("\n")).not.toContain("7340033");
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
