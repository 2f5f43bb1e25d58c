/**
 * The end-of-run cases (src/spawn/deadline-plan.ts) that both `spawn`
 * (timeout-policy-spawn.test.ts) and `spawnSync` (timeout-policy-sync.test.ts)
 * run, expecting the same outcome: failure, exit code, signal, how much
 * output was kept, whether a grandchild left holding the output was killed
 * with the group, and for a failed run the error (SubprocessError's code,
 * reason, timedOut). Runs use the default `reject: true`. No timing assertions: "output read after the
 * timeout" is shown by a line the grandchild writes after it, "reading
 * stopped" by a result that arrives while the grandchild still holds the pipe.
 */
import { expect } from "vitest";
import type { SpawnSyncOptions } from "../../src/index.js";
import { eventually, isRunning, LeftBehind } from "../fixtures/process-state.js";

export interface TimeoutCase {
  readonly name: string;
  /** Run as `/bin/sh -c script`; a case with a grandchild prints its pid first. */
  readonly script: string;
  readonly options: SpawnSyncOptions;
  readonly expected: {
    readonly failure: string | null;
    readonly exitCode: number | null;
    readonly signal: string | null;
    /** stdout after the grandchild's pid line, or its length when only that is known. */
    readonly stdout: string | { readonly bytes: number };
    /** The grandchild once the result is there: still running, or killed with the group. */
    readonly grandchild?: "alive" | "killed";
  };
}

export const TIMEOUT_CASES: readonly TimeoutCase[] = [
  {
    name: "a leader that outlives its timeout gets killSignal",
    script: "exec sleep 10",
    options: { timeout: 200, killGraceMs: 10_000 },
    expected: { failure: "timeout", exitCode: null, signal: "SIGTERM", stdout: "" },
  },
  {
    name: "the killSignal given is the one sent",
    script: "exec sleep 10",
    options: { timeout: 200, killSignal: "SIGUSR1" },
    expected: { failure: "timeout", exitCode: null, signal: "SIGUSR1", stdout: "" },
  },
  {
    name: "a leader that ignores killSignal gets SIGKILL after the grace",
    script: "trap '' TERM; while :; do sleep 0.05; done",
    options: { timeout: 200, killGraceMs: 300 },
    expected: { failure: "timeout", exitCode: null, signal: "SIGKILL", stdout: "" },
  },
  {
    name: "the rest of the group gets SIGKILL at the leader's exit (a grandchild ignoring killSignal)",
    script: "(trap '' TERM; exec sleep 30) & echo $!; exec sleep 10",
    options: { timeout: 200, killGraceMs: 20_000 },
    expected: {
      failure: "timeout",
      exitCode: null,
      signal: "SIGTERM",
      stdout: "",
      grandchild: "killed",
    },
  },
  {
    name: "without a process group only the leader is signalled; reading stops after the grace",
    script: "(exec sleep 30) & echo $!; exec sleep 10",
    options: { timeout: 200, killGraceMs: 300, processGroup: false },
    expected: {
      failure: "timeout",
      exitCode: null,
      signal: "SIGTERM",
      stdout: "",
      grandchild: "alive",
    },
  },
  {
    name: "a clean exit with a grandchild holding stdout: read until timeout + grace, the leader's exit",
    script: "(sleep 0.8; echo late; exec sleep 30) & echo $!",
    options: { timeout: 300, killGraceMs: 2500 },
    expected: {
      failure: null,
      exitCode: 0,
      signal: null,
      stdout: "late\n",
      grandchild: "alive",
    },
  },
  {
    name: "timeout 0 is no timeout",
    script: "sleep 0.3; echo done",
    options: { timeout: 0 },
    expected: { failure: null, exitCode: 0, signal: null, stdout: "done\n" },
  },
  {
    name: "maxBuffer keeps that many bytes and ends a running leader with killSignal",
    script: "head -c 100000 /dev/zero; exec sleep 10",
    options: { maxBuffer: 1000 },
    expected: { failure: "maxBuffer", exitCode: null, signal: "SIGTERM", stdout: { bytes: 1000 } },
  },
  {
    name: "output over maxBuffer after a clean exit is a maxBuffer failure with the leader's exit",
    script: "(sleep 0.3; head -c 100000 /dev/zero) & exit 0",
    options: { maxBuffer: 1000 },
    expected: { failure: "maxBuffer", exitCode: 0, signal: null, stdout: { bytes: 1000 } },
  },
  {
    name: "output over maxBuffer after a timeout that found the leader gone still counts",
    script: "(sleep 0.8; head -c 100000 /dev/zero) & exit 0",
    options: { timeout: 200, killGraceMs: 5000, maxBuffer: 1000 },
    expected: { failure: "maxBuffer", exitCode: 0, signal: null, stdout: { bytes: 1000 } },
  },
];

/** What a run gave, in the table's terms: its result, or the SubprocessError it threw. */
interface RunResult {
  readonly failure?: string | null;
  readonly reason?: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: unknown;
  readonly code?: string;
  readonly timedOut?: boolean;
}

const leftBehind = new LeftBehind();

/** Kills what a case left running (call from afterEach). */
export function killLeftBehind(): void {
  leftBehind.killAll();
}

/**
 * Checks a result against its case; call it as soon as the result is there
 * (the grandchild's state is read first, before anything awaits).
 */
export async function expectOutcome(testCase: TimeoutCase, outcome: unknown): Promise<void> {
  const expected = testCase.expected;
  const result = outcome as RunResult;
  const failed = outcome instanceof Error;
  let stdout = String(result.stdout);
  let grandchild: "alive" | "killed" | undefined;
  if (expected.grandchild !== undefined) {
    const newline = stdout.indexOf("\n");
    const pid = Number(stdout.slice(0, newline));
    expect(pid).toBeGreaterThan(0);
    leftBehind.add(pid);
    stdout = stdout.slice(newline + 1);
    // Killed at the leader's exit: gone a moment later (init reaps it), so wait for that event.
    grandchild =
      isRunning(pid) && !(await eventually(() => !isRunning(pid), 2000)) ? "alive" : "killed";
  }
  expect({
    failure: failed ? result.reason : result.failure,
    exitCode: result.exitCode,
    signal: result.signal,
    stdout: typeof expected.stdout === "string" ? stdout : { bytes: stdout.length },
    ...(grandchild === undefined ? {} : { grandchild }),
  }).toEqual(expected);
  // A failed run throws; its error says so the same way on both.
  expect(failed ? { code: result.code, timedOut: result.timedOut } : null).toEqual(
    expected.failure === null
      ? null
      : { code: "ERR_EXACTSPAWN_SUBPROCESS_FAILED", timedOut: expected.failure === "timeout" },
  );
}
