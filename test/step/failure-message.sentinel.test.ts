/**
 * Failed runs whose child DID print a value, or got one in argv: bash's own
 * `cd: VALUE: No such file or directory`, a `set -x` trace, a value echoed
 * to stderr, and a prompt passed to runtime.spawn as an argument. The
 * sentinel must reach none of: message, stack, String(error), the cause
 * chain's messages, util.inspect (default options), JSON.stringify, a pino
 * log of the error through pino's own error serializer, and the runtime's and
 * library's logs. The oracle that the value really was there: the child's
 * output (error.stderrTail / error.argv) holds it.
 *
 * Control check (done once, by hand): putting the stderr tail back into
 * SubprocessError's message (`${message}\n${stderrTail}`), or the quoted
 * argv, turned every case below red; making stderrTail enumerable again
 * turned the util.inspect, JSON and pino assertions red.
 */
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { SpawnError, SubprocessError, spawn } from "../../src/index.js";
import { setLogger } from "../../src/log.js";
import { createRuntime } from "../../src/runtime.js";
import { captureLog } from "../helpers/capture-log.js";
import { rejection } from "../helpers/steps.js";

const SENTINEL = "SENTINEL-9c41";
const VALUE = `/nonexistent/${SENTINEL}/dir`;

afterEach(() => setLogger(undefined));

/** What a host would see without reaching for the output properties on purpose. */
function messageSide(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  const seen = new Set<unknown>();
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    parts.push(current.message, current.stack ?? "", String(current), inspect(current.message));
    current = current.cause;
  }
  parts.push(inspect(error), JSON.stringify(error));
  return parts.join("\n");
}

function setup() {
  const runtimeLog = captureLog();
  const libraryLog = captureLog();
  setLogger(libraryLog.logger);
  const runtime = createRuntime({ logger: runtimeLog.logger });
  const logs = (): string => [...runtimeLog.lines, ...libraryLog.lines].join("\n");
  return { runtime, logs, hostLog: captureLog() };
}

async function failure(promise: PromiseLike<unknown>): Promise<SubprocessError> {
  const error = await rejection(Promise.resolve(promise));
  expect(SubprocessError.is(error)).toBe(true);
  return error as SubprocessError;
}

describe("a failed run's error names the program, never a value", () => {
  it.each([
    ["cd into a missing directory", 'cd "$RECIPE_VAR_dir"', 1],
    ["a set -x trace", 'set -x; : "$RECIPE_VAR_dir"; exit 3', 3],
    ["a value echoed to stderr", 'printf "%s\\n" "$RECIPE_VAR_dir" >&2; exit 4', 4],
  ])("bash step: %s", async (_label, command, status) => {
    const { runtime, logs, hostLog } = setup();
    const error = await failure(runtime.bash(command, { values: { dir: VALUE } }));
    // The oracle: bash really printed the value.
    expect(error.stderrTail).toContain(SENTINEL);
    expect(error).toMatchObject({ reason: "exit", exitCode: status });
    expect(error.message).toMatch(/^Command failed with exit code \d+: \S*bash \(/);
    expect(error.message).toMatch(/stderr \d+ bytes, tail in error\.stderrTail/);
    expect(messageSide(error)).not.toContain(SENTINEL);
    hostLog.logger.error({ err: error }, "step failed");
    expect(hostLog.lines.join("\n")).not.toContain(SENTINEL);
    expect(logs()).not.toContain(SENTINEL);
  });

  it("runtime.spawn: a prompt in argv, and echoed back on stdout and stderr", async () => {
    const { runtime, logs, hostLog } = setup();
    const prompt = `summarise ${SENTINEL} please`;
    const error = await failure(
      runtime.spawn("sh", ["-c", 'printf "%s" "$1"; printf "%s" "$1" >&2; exit 7', "sh", prompt]),
    );
    expect(error.argv).toContain(prompt);
    expect(error.stdoutTail).toBe(prompt);
    expect(error.stderrTail).toBe(prompt);
    const promptBytes = ["-c", 'printf "%s" "$1"; printf "%s" "$1" >&2; exit 7', "sh", prompt]
      .map((arg) => Buffer.byteLength(arg) + 1)
      .reduce((a, b) => a + b, 0);
    expect(error.message).toBe(
      `Command failed with exit code 7: sh (4 more argument(s), ${promptBytes} bytes, in error.argv; ` +
        `stdout ${prompt.length} bytes, tail in error.stdoutTail; ` +
        `stderr ${prompt.length} bytes, tail in error.stderrTail)`,
    );
    expect(messageSide(error)).not.toContain(SENTINEL);
    hostLog.logger.error({ err: error }, "agent failed");
    expect(hostLog.lines.join("\n")).not.toContain(SENTINEL);
    expect(logs()).not.toContain(SENTINEL);
  });

  it("runtime.spawn: a timeout while the prompt is in argv", async () => {
    const { runtime, logs } = setup();
    const error = await failure(
      runtime.spawn("sh", ["-c", "sleep 30", "sh", SENTINEL], { timeout: 100 }),
    );
    expect(error.reason).toBe("timeout");
    expect(error.message).toMatch(/^Command timed out after 100 ms \(SIGTERM\): sh \(/);
    expect(messageSide(error)).not.toContain(SENTINEL);
    expect(logs()).not.toContain(SENTINEL);
  });

  it("spawn: an exec too large for the kernel (SpawnError) names argv indexes and sizes only", async () => {
    const { logs } = setup();
    // Each under the per-string limit, together over the largest possible exec limit (6 MiB).
    const args = Array.from({ length: 60 }, (_, i) => `${SENTINEL}-${i}-${"p".repeat(120 * 1024)}`);
    const error = await rejection(Promise.resolve(spawn("/bin/true", args)));
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as SpawnError).message).toMatch(/^exec of \/bin\/true does not fit/);
    expect((error as SpawnError).message).toMatch(/argv\[\d+\] \(\d+ bytes\)/);
    expect(messageSide(error)).not.toContain(SENTINEL);
    expect(logs()).not.toContain(SENTINEL);
  });
});
