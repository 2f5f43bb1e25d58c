/**
 * runtime.bash's handle (issue 20, item 3): awaitable as before, and
 * watchable while the step runs — lines of stdout, stderr or both
 * interleaved, from any number of loops — with a spilled value, the pid, a
 * group kill, `all: true` and `killGraceMs`. Each "while it runs" check is
 * an event: the step waits on a gate file the test creates only after it
 * read the step's first line. Seen red before the handle existed (no
 * lines(), `all` and `killGraceMs` unknown options).
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { isRunning } from "../fixtures/process-state.js";
import { makeRootFactory, rejection } from "../helpers/steps.js";

const { root, removeRoots } = makeRootFactory();
afterAll(removeRoots);

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });
const BIG = "v".repeat(300 * 1024);

/** Waits (bash-side) until `gate` exists. */
const waitFor = (gate: string) => `until [ -e ${JSON.stringify(gate)} ]; do sleep 0.01; done`;

describe("runtime.bash's handle", () => {
  it("streams stdout line by line while the step runs, with a spilled value", async () => {
    const dir = root();
    const gate = join(dir, "gate");
    const handle = runtime.bash(
      `echo ready; ${waitFor(gate)}; printf '%s\\n' "\${#RECIPE_VAR_big}"; echo done`,
      { values: { big: BIG }, tmpdir: dir },
    );
    expect(handle.pid).toBeGreaterThan(0);
    const seen: string[] = [];
    for await (const line of handle.lines("stdout")) {
      seen.push(line);
      if (line === "ready") {
        // The step is still waiting for us: this line arrived while it ran.
        expect(isRunning(handle.pid!)).toBe(true);
        writeFileSync(gate, "");
      }
    }
    expect(seen).toEqual(["ready", String(BIG.length), "done"]);
    const result = await handle;
    expect(result.pid).toBe(handle.pid);
    expect(result.spilled.map((s) => s.name)).toEqual(["RECIPE_VAR_big"]);
    expect(result.stdout).toBe(`ready\n${BIG.length}\ndone\n`);
    expect(existsSync(gate)).toBe(true);
  });

  it("'all' interleaves both streams; every loop sees every line; result.all with all: true", async () => {
    const handle = runtime.bash("echo out1; echo err1 >&2; echo out2; echo err2 >&2", {
      all: true,
      tmpdir: root(),
    });
    const [all, out, err] = await Promise.all([
      collect(handle.lines("all")),
      collect(handle.lines("stdout")),
      collect(handle),
      // stderr read by a fourth loop started later still gets every line
    ]).then(async (lists) => [lists[0], lists[1], await collect(handle.lines("stderr"))]);
    expect(out).toEqual(["out1", "out2"]);
    expect(err).toEqual(["err1", "err2"]);
    expect([...all!].sort()).toEqual(["err1", "err2", "out1", "out2"]);
    // Each stream keeps its own order inside the interleaving.
    expect(all!.filter((l) => l.startsWith("out"))).toEqual(["out1", "out2"]);
    const result = await handle;
    expect(result.all?.split("\n").filter(Boolean)).toEqual(all);
    expect(result.stderr).toBe("err1\nerr2\n");
  });

  it("without all: true the result has no all", async () => {
    const result = await runtime.bash("echo x", { tmpdir: root() });
    expect(result).not.toHaveProperty("all");
  });

  it("kill() ends the step's process group; the handle rejects with the signal", async () => {
    const dir = root();
    const handle = runtime.bash("sleep 1000 & echo started; wait", { tmpdir: dir, step: "k" });
    for await (const line of handle) if (line === "started") break;
    expect(handle.kill()).toBe(true);
    const error = await rejection(handle.result);
    expect(error).toMatchObject({ reason: "signal", signal: "SIGTERM", step: "k" });
    expect(handle.kill()).toBe(false);
  });

  it("lines() of a stream the step does not capture is a TypeError", async () => {
    const handle = runtime.bash("true", { stdio: ["ignore", "ignore", "pipe"], tmpdir: root() });
    expect(() => handle.lines("stdout")).toThrow(TypeError);
    expect(() => handle.lines("both" as "all")).toThrow(TypeError);
    await handle;
  });

  it("a step that never starts: awaiting and iterating both reject with its error", async () => {
    const handle = runtime.bash("true", { cwd: join(root(), "missing"), tmpdir: root() });
    expect(handle.pid).toBeUndefined();
    const error = await rejection(handle.result);
    expect(error).toMatchObject({ code: "ENOENT", syscall: "chdir" });
    await expect(collect(handle.lines())).rejects.toBe(error);
  });

  it("a step whose signal was aborted before it started: with reject: false it resolves as an abort, its lines end empty", async () => {
    // The race of a task taken off a queue just before an abort.
    const controller = new AbortController();
    controller.abort();
    const options = { signal: controller.signal, tmpdir: root(), all: true } as const;
    const handle = runtime.bash("echo never", { ...options, reject: false });
    expect(handle.pid).toBeUndefined();
    expect(await collect(handle.lines("all"))).toEqual([]);
    expect(await collect(handle.lines())).toEqual([]);
    const result = await handle;
    expect(result).toMatchObject({ pid: undefined, failure: "abort", exitCode: null, output: "" });
    // With reject (the default) awaiting and iterating reject with the abort.
    const rejecting = runtime.bash("echo never", options);
    const error = await rejection(rejecting.result);
    expect(error).toMatchObject({ name: "SubprocessError", reason: "abort" });
    await expect(collect(rejecting.lines())).rejects.toBe(error);
  });

  it("is a Promise for code that stored runtime.bash's promise", async () => {
    const stored: Promise<{ output: string }> = runtime.bash("echo p", { tmpdir: root() });
    expect(await stored.then((r) => r.output)).toBe("p");
    expect(
      await runtime
        .bash("exit 2", { tmpdir: root() })
        .catch((e: { exitCode: number }) => e.exitCode),
    ).toBe(2);
  });
});

describe("killGraceMs", () => {
  it("is spawn's option: validated there and used for the step's group", async () => {
    expect(() => runtime.bash("true", { killGraceMs: -1, tmpdir: root() })).toThrow(
      /options\.killGraceMs must be a non-negative number/,
    );
    // A step that ignores SIGTERM ends by SIGKILL once the grace has passed.
    const error = await rejection(
      runtime.bash("trap '' TERM; echo ready; while :; do sleep 0.05; done", {
        timeout: 100,
        killGraceMs: 50,
        tmpdir: root(),
      }).result,
    );
    expect(error).toMatchObject({ reason: "timeout", signal: "SIGKILL" });
  });
});
