/**
 * The native boundary never crashes: every addon function, fed random
 * argument shapes by test/fixtures/boundary-fuzz.mjs in a child Node process
 * (so a segfault or abort is seen as a signal exit, not a dead test runner),
 * returns or throws a TypeError / Node-style system error, never coerces a
 * value (no toString/valueOf runs), and leaves no fd, pidfd or zombie.
 * Under `npm run test:asan` the child inherits the sanitizer build.
 *
 * The regressions below are the faults the fuzz found, pinned one by one.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { NativeBinding } from "../../src/native.js";
import { nativeBinding, nativeStatus } from "../../src/native.js";
import { eventually, openFds, zombieChildren } from "../fixtures/process-state.js";
import { rawSpawnOptions } from "../fixtures/raw-spawn.js";
import { byRun } from "../helpers/long.js";

const fixture = resolve(import.meta.dirname, "../fixtures/boundary-fuzz.mjs");

interface FuzzReport {
  seed: number;
  calls: Record<string, number>;
  outcomes: {
    ok: number;
    typeError: number;
    systemError: Record<string, number>;
    poison: number;
    unexpected: string[];
  };
  unexpectedCount: number;
  coercions: number;
  zombies: number;
  fdsBefore: number;
  fdsAfter: number;
}

function fuzz(
  seed: number,
  rounds: number,
): { status: number | null; signal: string | null; report: FuzzReport | null; stderr: string } {
  const run = spawnSync(process.execPath, [fixture, String(seed), String(rounds)], {
    encoding: "utf8",
    timeout: 240_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = run.stdout.trim().split("\n").at(-1) ?? "";
  let report: FuzzReport | null = null;
  try {
    report = JSON.parse(line) as FuzzReport;
  } catch {
    report = null;
  }
  return { status: run.status, signal: run.signal, report, stderr: run.stderr };
}

const binding = (): NativeBinding & Required<Pick<NativeBinding, "spawn" | "pipe" | "closeFd">> =>
  nativeBinding() as NativeBinding & Required<Pick<NativeBinding, "spawn" | "pipe" | "closeFd">>;

describe.runIf(nativeStatus().loaded)("fuzzing the native boundary (in a child process)", () => {
  // `npm run test:long` fuzzes deeper: more seeds, four times the rounds each.
  const seeds = [
    1,
    Number(process.env["EXACTSPAWN_FUZZ_SEED"] ?? 20261202),
    ...byRun([], [2, 3, 4, 5]),
  ];
  const rounds = byRun(2500, 10_000);
  it.each(seeds)("seed %i: thousands of random calls, no crash, no coercion, no leak", (seed) => {
    const { status, signal, report, stderr } = fuzz(seed, rounds);
    expect({ signal, status, stderr: stderr.slice(0, 4000) }).toEqual({
      signal: null,
      status: 0,
      stderr: "",
    });
    expect(report).not.toBeNull();
    const r = report!;
    console.log(
      `fuzz seed ${seed}: ${JSON.stringify(r.calls)} → ok ${r.outcomes.ok}, TypeError ${r.outcomes.typeError}, ` +
        `poison ${r.outcomes.poison}, system errors ${JSON.stringify(r.outcomes.systemError)}`,
    );
    expect(r.outcomes.unexpected).toEqual([]);
    expect(r.coercions).toBe(0);
    expect(r.zombies).toBe(0);
    expect(r.fdsAfter).toBeLessThanOrEqual(r.fdsBefore);
    const total = Object.values(r.calls).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(5000);
    // Every kind of outcome was reached, so the fuzz got past the type checks.
    expect(r.outcomes.ok).toBeGreaterThan(0);
    expect(r.outcomes.typeError).toBeGreaterThan(0);
    expect(Object.keys(r.outcomes.systemError).length).toBeGreaterThan(0);
  });
});

describe.runIf(nativeStatus().loaded)("boundary regressions found by the fuzz", () => {
  it("a sparse stdio array claiming 2^32 - 1 slots is refused without allocating for them", () => {
    // Before the fix: std::vector<int>(length) zero-filled 16 GiB before reading slot 0.
    const stdio = new Array(2 ** 32 - 1).fill(-1, 0, 4);
    expect(() => binding().spawn(rawSpawnOptions({ stdio }))).toThrow(
      new TypeError("spawn: stdio must have at most 1048576 slots"),
    );
  });

  it("sparse argv/envp arrays fail at their first hole, without a reserve sized by length", () => {
    // Before the fix: reserve(2^32 - 1) std::strings (bad_alloc, or an ASan abort).
    const argv = new Array(2 ** 32 - 1);
    argv[0] = "true";
    expect(() => binding().spawn(rawSpawnOptions({ argv }))).toThrow(
      new TypeError("spawn: argv[1] must be a string or Buffer"),
    );
    expect(() => binding().spawn(rawSpawnOptions({ envp: new Array(2 ** 32 - 1) }))).toThrow(
      new TypeError("spawn: envp[0] must be a string or Buffer"),
    );
  });

  it("a stdio source fd of INT_MAX is a system error, not a signed overflow", () => {
    // Before the fix: `high = INT_MAX + 1` (undefined behaviour, UBSan aborts).
    let caught: unknown;
    try {
      binding().spawn(rawSpawnOptions({ stdio: [2 ** 31 - 1, 0, 1] }));
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: "EBADF", syscall: "posix_spawn", errno: -9 });
  });

  it.each([Number.NaN, 1e300, -1e300, 2 ** 31, Number.POSITIVE_INFINITY, 1.5, -0.5])(
    "a non-integer or out-of-range number %s is a TypeError for stdio, kill and closeFd",
    (value) => {
      // Before the fix these were converted to int before the range check (undefined).
      expect(() => binding().spawn(rawSpawnOptions({ stdio: [-1, -1, value] }))).toThrow(TypeError);
      expect(() => binding().closeFd(value)).toThrow(TypeError);
      const handle = binding().spawn(rawSpawnOptions());
      expect(() => handle.kill(value)).toThrow(TypeError);
      expect(() => handle.killGroup(value)).toThrow(TypeError);
    },
  );

  it("Buffers and strings with NUL are refused in every string field", () => {
    const nul = ["a\0b", Buffer.from("A=\0")];
    for (const bad of nul) {
      expect(() => binding().spawn(rawSpawnOptions({ argv: ["true", bad] }))).toThrow(/NUL byte/);
      expect(() => binding().spawn(rawSpawnOptions({ envp: [bad] }))).toThrow(/NUL byte/);
    }
    expect(() => binding().spawn(rawSpawnOptions({ file: "/bin/true\0x" }))).toThrow(TypeError);
    expect(() => binding().spawn(rawSpawnOptions({ cwd: "/\0tmp" }))).toThrow(TypeError);
  });

  it("a getter that throws surfaces its own error and spawns nothing", async () => {
    const options = rawSpawnOptions();
    Object.defineProperty(options, "onExit", {
      get() {
        throw new RangeError("getter");
      },
    });
    const fdsBefore = openFds().length;
    expect(() => binding().spawn(options)).toThrow(new RangeError("getter"));
    expect(openFds().length).toBe(fdsBefore); // no pidfd: nothing was spawned
    expect(await eventually(() => zombieChildren().length === 0)).toBe(true);
  });

  it("the exported ChildHandle constructor makes an inert handle", () => {
    const Ctor = (
      nativeBinding() as unknown as {
        ChildHandle: new () => { kill(s: number): number; killGroup(s: number): number };
      }
    ).ChildHandle;
    const inert = new Ctor();
    expect(inert.kill(0)).toBe(-3); // -ESRCH: no child
    // -ESRCH: no leader pins a group id, so no group is signalled (not even pid 0's).
    expect(inert.killGroup(0)).toBe(-3);
  });
});
