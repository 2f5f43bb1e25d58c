/**
 * Runs one bash step (ARCHITECTURE "One bash step", steps 5-9): plans it
 * (bash-plan.ts), writes the spilled values and a large script into
 * descriptors the library opened, starts bash with the exact envp in a
 * process group of its own, closes the parent's descriptors as soon as the
 * child started, and builds the result, the error and the end event from
 * one record. Spawn's controls reach the step unchanged (rest destructuring:
 * step-options.ts holds the one table).
 */

import { Buffer } from "node:buffer";
import { performance } from "node:perf_hooks";
import { measureArgv } from "../env/bounded-env.js";
import type { SizedName } from "../errors.js";
import { ownProperties } from "../known-options.js";
import type { Logger } from "../log.js";
import { nativeBinding } from "../native.js";
import { releasePipeEnds } from "../spawn/kernel-pipe.js";
import { spawn } from "../spawn/spawn.js";
import type { SpawnResult, Subprocess } from "../spawn/subprocess.js";
import type { BashStepOptions } from "./bash-options.js";
import {
  type BashStepHost,
  type BashStepPlan,
  planSkips,
  planWithInvocation,
} from "./bash-plan.js";
import type { LineHub } from "./line-hub.js";
import { type SpillDescriptor, writeScriptDescriptor, writeSpillValues } from "./spill-files.js";
import { StepHandle } from "./step-handle.js";
import {
  logStepEnd,
  logStepStart,
  stepIdentity,
  stepLogger,
  tagStepError,
} from "./step-identity.js";
import type { BashSpawnOptions } from "./step-options.js";
import { stdioSlots } from "./temp-layout.js";
import { handleUntrustedSkips, reportDrops, reportSpills } from "./untrusted-skips.js";

export { BASH_STEP_OPTION_KEYS, type BashStepOptions, UNNAMED_STEP } from "./bash-options.js";
export {
  BASH_OPTIONS,
  type BashStepHost,
  type BashStepPlan,
  planBashStep,
  planSkips,
  type VariableFate,
  type VariableReport,
} from "./bash-plan.js";

/** A step's outcome; runtime.bash types stdout/stderr from its `stdio`: string, or null when not captured. */
export interface BashStepResult<Stdout = string | Buffer | null, Stderr = Stdout>
  extends SpawnResult<Stdout, Stderr> {
  /** With `all: true`: stdout's and stderr's lines interleaved as they arrived, each ending in "\n". */
  readonly all?: string;
  /** stdout with trailing whitespace removed: the step's output value. */
  readonly output: string;
  readonly interpreter: string;
  readonly scriptMode: "inline" | "file";
  /** Step values moved to a private descriptor and read back by the preamble. */
  readonly spilled: readonly SizedName[];
  /**
   * Parent variables not inherited (`not_allowed`, `blocked`, `too_large`),
   * inherited variables trimmed to fit (`trimmed`), and over-cap values with
   * unspillable names.
   */
  readonly dropped: readonly (SizedName & { readonly reason: string })[];
  /** Context keys and step values that were not exported, with the reason. */
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
}

/**
 * Runs a bash step (see the module comment). Resolves with the result, or
 * rejects: SubprocessError for a failed run (unless `reject: false`), a
 * Node-style system error when bash cannot start, EnvBudgetError, SpillError
 * or InvalidEnvError before anything starts. The spilled values and a large
 * script reach bash through descriptors the library opened (memfd, else an
 * O_TMPFILE or already-unlinked file: docs/spill.md); the parent's copies
 * are closed as soon as the child has started, and bash closes its own
 * before the command runs.
 */
export function runBashStep(
  host: BashStepHost,
  command: string,
  given: BashStepOptions = {},
): StepHandle<BashStepResult> {
  // Own properties only, each read once: nothing below reads `given` again.
  const options = ownProperties(given);
  const o = options as Partial<BashStepOptions> | null;
  const identity = stepIdentity(o?.step, o?.correlationId, host.correlationId);
  const log = stepLogger(host.logger, identity);
  const startedAt = performance.now();
  host.firstUse?.(log);
  let started: StartedStep;
  try {
    started = startStep(host, command, options, log);
  } catch (error) {
    // A pipe end given to a step that never reached spawn is closed all the same.
    releasePipeEnds(o?.stdio);
    logStepEnd(log, "bash", undefined, startedAt, { ok: false, error });
    const tagged = tagStepError(error, identity);
    // One rule for every call (docs/spawn.md, "Errors"): a TypeError (a bad
    // option or argument, InvalidEnvError among them) is thrown here; what
    // the run meets (no bash, a budget, a spill) rejects through the handle.
    if (error instanceof TypeError) throw tagged;
    return StepHandle.failed(tagged);
  }
  const { child, plan } = started;
  logStepStart(log, "bash", {
    childPid: child.pid,
    spilled: plan.spill.spilled.length,
    spilledBytes: plan.spill.spilled.reduce((sum, s) => sum + s.bytes, 0),
    skipped: plan.layered.skipped.length + plan.bounded.skipped.length + plan.stepSkipped.length,
    dropped: plan.spill.dropped.length + plan.bounded.dropped.length,
  });
  const outcome = async (hub: () => LineHub | undefined): Promise<BashStepResult> => {
    try {
      const result = await child;
      const lines = options.all === true ? hub() : undefined;
      if (lines !== undefined) await lines.done;
      const value = stepResult(result, plan, lines?.all());
      logStepEnd(log, "bash", child.pid, startedAt, { ok: true, value });
      return value;
    } catch (error) {
      logStepEnd(log, "bash", child.pid, startedAt, { ok: false, error });
      throw tagStepError(error, identity);
    }
  };
  return new StepHandle(child, outcome, options.all === true);
}

interface StartedStep {
  readonly child: Subprocess<SpawnResult<string | Buffer | null>>;
  readonly plan: BashStepPlan;
}

/** The result a step resolves with: spawn's, plus what the plan decided (names and sizes). */
function stepResult(
  result: SpawnResult<string | Buffer | null>,
  plan: BashStepPlan,
  all: string | undefined,
): BashStepResult {
  const stdout =
    typeof result.stdout === "string"
      ? result.stdout
      : Buffer.isBuffer(result.stdout)
        ? result.stdout.toString("utf8")
        : "";
  return {
    ...result,
    ...(all === undefined ? {} : { all }),
    output: stdout.trimEnd(),
    interpreter: plan.interpreter,
    scriptMode: plan.scriptMode,
    spilled: plan.spill.spilled,
    dropped: [
      ...plan.layered.dropped,
      ...plan.spill.dropped,
      ...plan.bounded.dropped.map((d) => ({ ...d, reason: "trimmed" })),
    ],
    skipped: planSkips(plan),
  };
}

/**
 * spawn's controls of a step: everything but the envelope and the bash
 * step's own keys, passed on as given (spawn validates them), so a control
 * added to spawn reaches bash steps with no change here.
 */
function spawnControls(options: BashStepOptions): BashSpawnOptions {
  const {
    context: _context,
    extra: _extra,
    correlationId: _correlationId,
    step: _step,
    limits: _limits,
    values: _values,
    tmpdir: _tmpdir,
    spillKinds: _spillKinds,
    all: _all,
    maxEnvValueBytes: _maxEnvValueBytes,
    ...controls
  } = options;
  return controls;
}

/** Plans the step and starts bash (synchronously); throws what planning or starting throws. */
function startStep(
  host: BashStepHost,
  command: string,
  options: BashStepOptions,
  log: Logger,
): StartedStep {
  const { plan, invocation } = planWithInvocation(host, command, options);
  // The plan's footprint is exact only if the planner predicted this argv's
  // size exactly (the env is the plan's own): a mismatch is a bug, caught
  // here rather than as a wrong budget.
  const measured = measureArgv(invocation.argv);
  if (measured.bytes !== plan.spill.argv.bytes || measured.argc !== plan.spill.argv.argc) {
    throw new Error(
      `exactspawn: internal error: the planned argv (${plan.spill.argv.bytes} bytes, ` +
        `${plan.spill.argv.argc} strings) differs from the real one (${measured.bytes} bytes, ${measured.argc} strings)`,
    );
  }
  // Untrusted input that will not arrive is reported or refused before anything starts.
  handleUntrustedSkips(planSkips(plan), host.untrustedSkips, log, "bash");
  reportDrops(log, [
    ...plan.spill.dropped,
    ...plan.bounded.dropped.map((d) => ({ ...d, reason: "trimmed" })),
  ]);
  reportSpills(log, plan.spill.spilled);
  const descriptorOptions = {
    tmpdir: plan.tmpdir,
    binding: nativeBinding(),
    ...(options.spillKinds === undefined ? {} : { kinds: options.spillKinds }),
  };
  const opened: SpillDescriptor[] = [];
  let child: Subprocess<SpawnResult<string | Buffer | null>>;
  try {
    const values = writeSpillValues(plan.spill, plan.layered.env, descriptorOptions);
    if (values.descriptor !== undefined) opened.push(values.descriptor);
    const stdio = stdioSlots(options.stdio);
    if (invocation.valuesFd !== undefined) stdio[invocation.valuesFd] = values.descriptor!.fd;
    if (invocation.scriptFd !== undefined) {
      const script = writeScriptDescriptor(invocation.script, descriptorOptions);
      opened.push(script);
      stdio[invocation.scriptFd] = script.fd;
    }
    const [, ...args] = invocation.argv;
    child = spawn(plan.interpreter, args, {
      ...spawnControls(options),
      env: plan.bounded.env,
      argv0: plan.interpreter,
      stdio,
      processGroup: true,
      cleanup: options.cleanup ?? host.cleanup ?? true,
    });
  } finally {
    // spawn has started the child (or failed) synchronously: the child holds
    // its own copies now, and the parent's must not outlive this step.
    for (const descriptor of opened) descriptor.close();
  }
  return { child, plan };
}
