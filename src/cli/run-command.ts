/**
 * `exactspawn run -- COMMAND`: runs COMMAND as a bash step with the given
 * context, step values and parent environment. The step's stdout and stderr
 * stream straight to ours (inherited fds, nothing buffered); its exit status
 * becomes ours (a signal n becomes 128 + n).
 */
import { constants } from "node:os";
import { escapeControls, firstLine } from "../errors.js";
import { probeLimits } from "../limits.js";
import type { BashStepResult } from "../step/bash-step.js";
import { parseCommandLine } from "./command-line.js";
import { DURATION_HELP, formatDuration, parseDuration } from "./duration.js";
import { explainReport, explainTable } from "./explain-view.js";
import { SANDBOX_RUN_HELP, SANDBOX_RUN_OPTIONS, sandboxFromValues } from "./sandbox-options.js";
import { STEP_OPTIONS, STEP_OPTIONS_HELP, stepRequest } from "./step-options.js";
import { planStep, runtimeFor, stepOptions } from "./step-plan.js";
import { unreachedError, unreachedValues } from "./unreached.js";
import { isUsageError, UsageError } from "./usage-error.js";

export const RUN_HELP = `Usage: exactspawn run [options] [--sandbox ...] [--allow-skips] [--timeout DURATION] [--contain] [--verbose] -- COMMAND

Runs COMMAND (its words joined by spaces into one bash script) as a bash step: the parent
environment through the allow and block lists, the context, the step values (spilled to private
files when they do not fit), the budget checked exactly, then bash. The step's stdout and stderr
go straight to this terminal; its stdin is this process's stdin unless that is a terminal or a
value was read from it with @- (then /dev/null: the step runs in its own process group).
A --var or --context value that would not reach the step (an invalid or reserved name, no room
in the budget) stops the run with exit status 2, naming it, unless --allow-skips.

Options:
${STEP_OPTIONS_HELP}
${SANDBOX_RUN_HELP}
  --allow-skips         run even when a --var or --context value would not reach the step
  --timeout DURATION    stop the step after DURATION: ${DURATION_HELP} (SIGTERM to its
                        process group, then SIGKILL). Not milliseconds as the API's timeout:
                        --timeout 30 is 30 seconds, --timeout 300ms is 300 milliseconds
  --contain             require containment: everything the step starts dies with it (exit status
                        125 where this host cannot; without it the step is contained where it can)
  --verbose             print the plan (the explain table) to stderr first
  -h, --help

Exit status: the step's own; 128 + n when signal n ended it; 124 on --timeout; 125 when the step
could not be planned or started; 2 usage error, or a named value that would not reach the step.`;

/** Exit status for "exactspawn could not plan or start the step" (as env(1) uses it). */
export const EXIT_CANNOT_RUN = 125;
/** Exit status after --timeout (as timeout(1) uses it). */
export const EXIT_TIMEOUT = 124;

function timeoutMs(text: string | undefined): number | undefined {
  return text === undefined ? undefined : parseDuration(text, "--timeout");
}

function signalExit(signal: string | null): number {
  const number = signal === null ? undefined : constants.signals[signal as NodeJS.Signals];
  return 128 + (number ?? 0);
}

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export async function runRun(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine("run", argv, {
    ...STEP_OPTIONS,
    ...SANDBOX_RUN_OPTIONS,
    "allow-skips": { type: "boolean" },
    timeout: { type: "string" },
    contain: { type: "boolean" },
    verbose: { type: "boolean" },
  });
  if (values.help) {
    process.stdout.write(`${RUN_HELP}\n`);
    return 0;
  }
  const request = stepRequest(values, positionals, undefined);
  if (request.command.trim() === "") throw new UsageError("the COMMAND is empty");
  const timeout = timeoutMs(values.timeout);
  const sandbox = sandboxFromValues(values);
  if (request.limitsSource === "option" && request.limits.execLimit > probeLimits().execLimit) {
    throw new UsageError("--exec-limit is above this machine's exec limit");
  }
  const runtime = runtimeFor(request);
  const fail = (error: unknown): number => {
    const message = firstLine(error);
    process.stderr.write(`exactspawn run: ${escapeControls(message)}\n`);
    return isUsageError(error) ? 2 : EXIT_CANNOT_RUN;
  };

  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    received ??= signal;
    controller.abort();
  };
  for (const signal of FORWARDED) process.on(signal, onSignal);
  let result: BashStepResult;
  try {
    const options = stepOptions(request);
    if (values.verbose || values["allow-skips"] !== true) {
      const plan = planStep(runtime, request);
      if (values.verbose) {
        const report = explainReport(plan, request.command, request.limitsSource);
        process.stderr.write(`${explainTable(report, process.stderr)}\n`);
        const limit = timeout === undefined ? "none" : `${formatDuration(timeout)} (${timeout} ms)`;
        process.stderr.write(`timeout: ${limit}\n`);
      }
      const unreached = unreachedValues(plan, request, runtime.config.stepPrefix, (key) => {
        const value = request.context?.get(key);
        if (value === undefined) return undefined;
        return runtime.exportContext(new Map([[key, value]])).pairs[0]?.[0];
      });
      if (values["allow-skips"] !== true && unreached.length > 0) throw unreachedError(unreached);
    }
    const stdin = process.stdin.isTTY || request.stdinUsed ? "ignore" : "inherit";
    result = await runtime.bash(request.command, {
      ...options,
      stdio: [stdin, "inherit", "inherit"],
      reject: false,
      signal: controller.signal,
      ...(timeout === undefined ? {} : { timeout }),
      ...(sandbox === undefined ? {} : { sandbox }),
      ...(values.contain === true ? { contain: true } : {}),
    });
  } catch (error) {
    return fail(error);
  } finally {
    for (const signal of FORWARDED) process.off(signal, onSignal);
  }
  request.log.info(
    {
      exitCode: result.exitCode,
      signal: result.signal,
      durationMs: Math.round(result.durationMs),
      spilled: result.spilled.length,
      dropped: result.dropped.length,
      skipped: result.skipped.length,
      native: result.native,
    },
    "exactspawn: step finished",
  );
  if (result.failure === "timeout") {
    process.stderr.write(
      `exactspawn run: the step timed out after ${formatDuration(timeout ?? 0)} (--timeout ${values.timeout})\n`,
    );
    return EXIT_TIMEOUT;
  }
  if (received !== undefined) return signalExit(received);
  if (result.exitCode !== null) return result.exitCode;
  return signalExit(result.signal);
}
