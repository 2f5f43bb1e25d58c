/**
 * One rule for bad calls (issue 20, item 9; docs/spawn.md "Errors"): a
 * TypeError — an unknown option, a wrong type, InvalidEnvError — is thrown
 * synchronously by spawn, runtime.spawn and runtime.bash alike; everything
 * the run meets (no such file, no bash, a budget) rejects through the
 * returned handle, so `.catch()` sees it. The child_process options this
 * library leaves out on purpose say what to use instead, and a runtime
 * without a bash says how to give it one. Seen red before: runtime.bash
 * rejected its TypeErrors, runtime.spawn threw ENOENT and EnvBudgetError,
 * the shell/detached errors and the missing-bash error said nothing more.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createRuntime, EnvBudgetError, spawn } from "../../src/index.js";
import { makeRootFactory, rejection } from "../helpers/steps.js";

const { root, removeRoots } = makeRootFactory();
afterAll(removeRoots);

const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });

function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected a synchronous throw");
}

describe("a bad call throws a TypeError synchronously, everywhere", () => {
  it.each([
    ["spawn", () => spawn("/bin/true", [], { envv: {} } as never)],
    ["runtime.spawn", () => runtime.spawn("/bin/true", [], { envv: {} } as never)],
    ["runtime.bash", () => runtime.bash("true", { envv: {} } as never)],
    ["runtime.bash (a spawn option's type)", () => runtime.bash("true", { killGraceMs: -1 })],
  ])("%s", (_, call) => {
    expect(thrown(call)).toBeInstanceOf(TypeError);
  });
});

describe("what the run meets rejects, never throws", () => {
  it("runtime.spawn of a missing program rejects with ENOENT (as spawn does)", async () => {
    const child = runtime.spawn("no-such-program-exactspawn", [], { step: "agent" });
    expect(child.pid).toBeUndefined();
    expect(await rejection(child.result)).toMatchObject({
      code: "ENOENT",
      syscall: "posix_spawn",
      step: "agent",
    });
  });

  it("runtime.spawn whose protected variables cannot fit rejects with EnvBudgetError", async () => {
    const tight = createRuntime({
      parentEnv: { PATH: "/usr/bin:/bin" },
      hostEnv: { EXACTSPAWN_STATE: "s".repeat(60_000) },
    });
    const child = tight.spawn("/bin/true", [], {
      limits: { execLimit: 50_000, maxArgStrlen: 131_072 },
    });
    expect(await rejection(child.result)).toBeInstanceOf(EnvBudgetError);
  });
});

describe("options left out on purpose say what to use instead", () => {
  it.each([
    ["shell", /unknown option "shell"; .*runtime\.bash\(command\)/],
    ["detached", /unknown option "detached"; use processGroup: true .* or setsid: true/],
  ])("%s", (key, message) => {
    expect(() => spawn("/bin/true", [], { [key]: true } as never)).toThrow(message);
    expect(() => runtime.spawn("/bin/true", [], { [key]: true } as never)).toThrow(message);
  });
});

describe("a runtime without a bash", () => {
  it.each([
    ["no PATH", {}, /the parent environment has no PATH/],
    ["an empty PATH", { PATH: "" }, /PATH is empty/],
    [
      "a PATH without bash",
      { PATH: "/nonexistent-a:/nonexistent-b" },
      /no executable bash in the 2 entries/,
    ],
  ])("%s: rejects with ENOENT saying how to give it one", async (_, parentEnv, why) => {
    const bare = createRuntime({ parentEnv });
    const error = (await rejection(bare.bash("true", { tmpdir: root() }).result)) as Error;
    expect(error).toMatchObject({ code: "ENOENT", syscall: "posix_spawn", path: "bash" });
    expect(error.message).toMatch(why);
    expect(error.message).toMatch(
      /parentEnv.*--parent-env.*EXACTSPAWN_BASH=\/absolute\/path\/to\/bash/,
    );
    expect(error.message).not.toContain("nonexistent");
  });
});

describe("the CLI without a bash", () => {
  it("exactspawn run --parent-env /dev/null says how to give it one", async () => {
    const { cli } = await import("../helpers/run-cli.js");
    const run = cli(["run", "--parent-env", "/dev/null", "--", "echo hi"]);
    expect(run.status).toBe(125);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      /ENOENT bash: cannot find the bash interpreter \(the parent environment has no PATH\)/,
    );
    expect(run.stderr).toContain("--parent-env");
  });
});
