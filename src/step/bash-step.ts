/**
 * One bash step, end to end (ARCHITECTURE "One bash step"):
 *
 *   interpreter (parent env only) → layered env (inherited, context, step
 *   values, session, overlay, extra, host, grants, correlation) → spill plan
 *   (per-value cap, then the exact exec budget) → bounded env (trim
 *   non-protected inherited variables, or EnvBudgetError) → spill
 *   descriptors and preamble → inline `bash -c` or the script through a
 *   descriptor (64 KiB rule) → spawn with the exact envp; the parent's
 *   descriptors are closed as soon as the child started.
 *
 * `planBashStep` is the pure part (no files, no spawn) that `explain` shows;
 * `runBashStep` realises it. Every report carries names, sizes and reasons —
 * never a value.
 */
import { tmpdir as osTmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import { type BoundedEnv, boundedEnv, measureArgv } from "../env/bounded-env.js";
import type { ContextInput } from "../env/context-export.js";
import { freezeMap } from "../env/frozen-map.js";
import { inheritedNames, type LayeredEnv, type LayerSkip, untrustedNames } from "../env/layers.js";
import type { StepWithRetiredFields } from "../env/retired-fields.js";
import { planSpill, type SpillPlan } from "../env/spill-plan.js";
import { type StepValueSkip, type StepValues, stepValueEnv } from "../env/step-values.js";
import {
  assertRecordOrMap,
  assertUntrustedKeyCount,
  DEFAULT_MAX_UNTRUSTED_KEYS,
} from "../env/untrusted-keys.js";
import { pairBytes } from "../env-input.js";
import { compareNames, InvalidEnvError, type SizedName } from "../errors.js";
import { assertKnownOptions, knownKeys } from "../known-options.js";
import { assertLimitsOption, type Limits, probeLimits } from "../limits.js";
import { type Logger, logger } from "../log.js";
import { nativeBinding } from "../native.js";
import type { ContainOption } from "../spawn/contain.js";
import type { SandboxOptions } from "../spawn/sandbox.js";
import { spawn } from "../spawn/spawn.js";
import type { SpawnOptions } from "../spawn/spawn-options.js";
import type { SpawnResult, Subprocess } from "../spawn/subprocess.js";
import { type BashInvocation, bashArgvSizer, bashInvocation } from "./bash-script.js";
import type { LineHub } from "./line-hub.js";
import { spillReads } from "./preamble.js";
import {
  type DescriptorKind,
  type SpillDescriptor,
  writeScriptDescriptor,
  writeSpillValues,
} from "./spill-files.js";
import { StepHandle } from "./step-handle.js";
import {
  logStepEnd,
  logStepStart,
  stepIdentity,
  stepLogger,
  tagStepError,
} from "./step-identity.js";
import { firstSpillSlot, stdioSlots } from "./temp-layout.js";
import { handleUntrustedSkips, type UntrustedSkips } from "./untrusted-skips.js";

/**
 * Options bash gets before the script. `--norc`: bash sources ~/.bashrc even
 * non-interactively when its stdin is a socket (Debian's ssh heuristic) and
 * SHLVL is unset; `--noprofile` for symmetry. Neither affects BASH_ENV.
 */
export const BASH_OPTIONS: readonly string[] = Object.freeze(["--norc", "--noprofile"]);

/** What a runtime lends a bash step. */
export interface BashStepHost {
  readonly stepPrefix: string;
  /** Which step values get an upper-case alias: all (compat preset) or the declared bare names. */
  readonly aliases?: boolean | ReadonlySet<string>;
  readonly interpreter: () => string;
  readonly buildEnv: (options: {
    context?: ContextInput;
    stepValues?: ReadonlyMap<string, string>;
    extra?: Readonly<Record<string, string | undefined>> | ReadonlyMap<string, string>;
    correlationId?: string;
  }) => LayeredEnv;
  readonly protected: { readonly names: readonly string[]; readonly prefixes: readonly string[] };
  readonly tmpdir: () => string | undefined;
  /** The runtime's logger for step notices (drops, trims); undefined: the library logger. */
  readonly logger?: Logger | undefined;
  /** Warns once per step name about retired fields (the runtime keeps one per instance). */
  readonly retiredFields?: ((step: StepWithRetiredFields) => unknown) | undefined;
  /** The runtime's default for `cleanup` (undefined: true). */
  readonly cleanup?: boolean | undefined;
  /** The runtime's correlation id: a step's identity when the call gives none (step-identity.ts). */
  readonly correlationId?: string | undefined;
  /** The runtime's bound on untrusted variables (undefined: DEFAULT_MAX_UNTRUSTED_KEYS). */
  readonly maxUntrustedKeys?: number | undefined;
  /** What a skipped untrusted entry does (undefined: "report"). */
  readonly untrustedSkips?: UntrustedSkips | undefined;
}

/** The step name retired-field notices use when a step has none. */
export const UNNAMED_STEP = "(unnamed step)";

export interface BashStepOptions {
  /** Untrusted context, exported through the runtime's context policy. */
  readonly context?: ContextInput;
  /** Step values: RECIPE_VAR_<name>, nested RECIPE_VAR_<a>__<b>, and the upper-case alias where the runtime declares it. */
  readonly values?: StepValues;
  /** Trusted per-call variables (above the overlay, below host values). */
  readonly extra?: Readonly<Record<string, string | undefined>> | ReadonlyMap<string, string>;
  /**
   * The correlation variable's value for this step, and the id its errors and
   * log events carry. Default: the runtime's; without one, a generated id
   * names the step in errors and logs only (not in the environment).
   */
  readonly correlationId?: string;
  /** The step's working directory. Spill files never go here. */
  readonly cwd?: string;
  /**
   * Where a spill descriptor is created when memfd is unavailable (the
   * fallback engine): an O_TMPFILE file, else a briefly named file in a
   * private directory. Default: the parent's TMPDIR.
   */
  readonly tmpdir?: string;
  /**
   * Test seam: the descriptor kinds to try, in order (default memfd, then
   * O_TMPFILE, then an unlinked file). See docs/spill.md.
   */
  readonly spillKinds?: readonly DescriptorKind[];
  /** Milliseconds; then killSignal to the step's process group, then SIGKILL. */
  readonly timeout?: number;
  readonly killSignal?: string | number;
  /** Milliseconds between killSignal and SIGKILL after a timeout or abort. Default 2000 (spawn's). */
  readonly killGraceMs?: number;
  readonly signal?: AbortSignal;
  /** Written to the step's stdin (otherwise stdin is /dev/null). */
  readonly input?: string | Uint8Array;
  /** The step's stdio, as spawn's `stdio` (e.g. "inherit" to stream). Default: stdout and stderr captured. */
  readonly stdio?: SpawnOptions["stdio"];
  /** Confines the step and everything it starts (docs/sandbox.md). Default: the runtime's `sandbox`. */
  readonly sandbox?: SandboxOptions;
  /**
   * Kill everything the step starts when it ends (docs/containment.md).
   * Default: the runtime's `contain`, which defaults to "best-effort" for
   * bash steps (contained wherever the host can; `result.contained` says),
   * and to none for a step with `cleanup: false` (it may outlive its host).
   */
  readonly contain?: ContainOption;
  /** Also collect stdout and stderr interleaved line by line, as the result's `all`. Default false. */
  readonly all?: boolean;
  /** Reject on a non-zero exit, a signal, a timeout or an abort. Default true. */
  readonly reject?: boolean;
  /**
   * SIGKILL the step's process group when the host ends, however it ends
   * (spawn's `cleanup`). Default: the runtime's `cleanup`, which defaults to true.
   */
  readonly cleanup?: boolean;
  /** The step's name: on every error (`error.step`, and in the message) and log event of the step. */
  readonly step?: string;
  /**
   * Accepted and ignored, with one warning per step name: the amplihack
   * recipe runner's `max_env_value_bytes` truncated values; here oversized
   * values are spilled, never truncated.
   */
  readonly maxEnvValueBytes?: unknown;
  /** Limits to plan against. Default probeLimits(). */
  readonly limits?: Pick<Limits, "execLimit" | "maxArgStrlen">;
}

/** The keys runtime.bash and planBash accept; any other key is a TypeError. One per line. */
export const BASH_STEP_OPTION_KEYS = knownKeys<BashStepOptions>({
  context: true,
  values: true,
  extra: true,
  correlationId: true,
  cwd: true,
  tmpdir: true,
  timeout: true,
  killSignal: true,
  killGraceMs: true,
  all: true,
  signal: true,
  input: true,
  stdio: true,
  reject: true,
  step: true,
  maxEnvValueBytes: true,
  limits: true,
  cleanup: true,
  sandbox: true,
  contain: true,
  spillKinds: true,
});

/** A variable's fate in a step, by name: never its value. */
export type VariableFate = "inline" | "spilled" | "trimmed" | "skipped" | "dropped";

export interface VariableReport {
  readonly name: string;
  readonly fate: VariableFate;
  /** The layer it came from (inline/spilled/trimmed), or where it was refused. */
  readonly origin: string;
  /** `NAME=value\0` bytes, when a value was seen. */
  readonly bytes: number | undefined;
  readonly reason: string | undefined;
}

export interface BashStepPlan {
  readonly interpreter: string;
  readonly limits: Pick<Limits, "execLimit" | "maxArgStrlen">;
  readonly layered: LayeredEnv;
  readonly stepSkipped: readonly StepValueSkip[];
  readonly spill: SpillPlan;
  readonly bounded: BoundedEnv;
  /** "inline" (`bash -c SCRIPT`) or "file" (the script through a descriptor), by the 64 KiB rule. */
  readonly scriptMode: "inline" | "file";
  /** Where a spill file would be created if memfd is unavailable (no path is part of the plan). */
  readonly tmpdir: string;
  /** Exact-model bytes of the planned exec. */
  readonly footprint: number;
  /** Every variable and its fate, sorted by name (built on first read). */
  readonly variables: readonly VariableReport[];
}

/** A step's outcome; runtime.bash types stdout/stderr from its `stdio`: string, or null when not captured. */
export interface BashStepResult<Stdout = string | null, Stderr = Stdout>
  extends SpawnResult<Stdout, Stderr> {
  /** With `all: true`: stdout's and stderr's lines interleaved as they arrived, each ending in "\n". */
  readonly all?: string;
  /** stdout with trailing whitespace removed: the step's output value. */
  readonly output: string;
  readonly interpreter: string;
  readonly scriptMode: "inline" | "file";
  /** Step values moved to a private descriptor and read back by the preamble. */
  readonly spilled: readonly SizedName[];
  /** Inherited variables trimmed to fit, and over-cap values with unspillable names. */
  readonly dropped: readonly (SizedName & { readonly reason: string })[];
  /** Context keys and step values that were not exported, with the reason. */
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
}

/**
 * Throws TypeError for an unknown key or a wrong-typed value the step itself
 * reads; the options spawn reads (timeout, input, stdio…) are checked by spawn.
 */
function validateOptions(options: unknown): asserts options is BashStepOptions {
  if (options === null || typeof options !== "object") {
    throw new TypeError("bash: options must be an object");
  }
  assertKnownOptions(options, BASH_STEP_OPTION_KEYS, "bash");
  const o = options as Record<string, unknown>;
  assertRecordOrMap(o["values"], "bash: options.values");
  assertRecordOrMap(o["context"], "bash: options.context");
  for (const key of ["cwd", "tmpdir", "step"]) {
    const value = o[key];
    if (value !== undefined && (typeof value !== "string" || value.length === 0)) {
      throw new TypeError(`bash: options.${key} must be a non-empty string`);
    }
  }
  if (o["all"] !== undefined && typeof o["all"] !== "boolean") {
    throw new TypeError("bash: options.all must be a boolean");
  }
  assertLimitsOption(o["limits"], "bash");
}

function validateCommand(command: unknown): asserts command is string {
  if (typeof command !== "string") throw new TypeError("bash: command must be a string");
  if (command.includes("\0")) throw new InvalidEnvError("bash: the command contains NUL");
  if (!command.isWellFormed()) {
    throw new InvalidEnvError("bash: the command contains a lone UTF-16 surrogate");
  }
}

/**
 * The name a layering skip is reported under: for a step value, the variable
 * name the step would have had (`RECIPE_VAR_a-b`), not its upper-cased
 * spelling; for a context key, the name it would have been exported as.
 */
function skippedName(skip: LayerSkip): string {
  return skip.layer === "step" ? skip.key : skip.name;
}

function variableReports(
  layered: LayeredEnv,
  stepSkipped: readonly StepValueSkip[],
  spill: SpillPlan,
  bounded: BoundedEnv,
): VariableReport[] {
  const reports: VariableReport[] = [];
  const spilled = new Set(spill.spilled.map((s) => s.name));
  const droppedStep = new Map(spill.dropped.map((d) => [d.name, d]));
  const trimmed = new Map(bounded.dropped.map((d) => [d.name, d]));
  const overBudget = new Set(bounded.skipped.map((d) => d.name));
  for (const [name, value] of layered.env) {
    const origin = layered.origin.get(name) ?? "inherited";
    const bytes = spill.sizes.get(name) ?? pairBytes(name, value);
    const fate: VariableFate = spilled.has(name)
      ? "spilled"
      : droppedStep.has(name)
        ? "dropped"
        : trimmed.has(name)
          ? "trimmed"
          : overBudget.has(name)
            ? "skipped"
            : "inline";
    const reason =
      fate === "spilled"
        ? "over the per-value cap or the budget"
        : fate === "dropped"
          ? droppedStep.get(name)?.reason
          : fate === "trimmed"
            ? "over budget from trusted variables: largest non-protected inherited variable"
            : fate === "skipped"
              ? "aggregate_env_budget"
              : undefined;
    reports.push({ name, fate, origin, bytes, reason });
  }
  for (const drop of layered.dropped) {
    reports.push({
      name: drop.name,
      fate: "dropped",
      origin: "inherited",
      bytes: drop.bytes,
      reason: drop.reason,
    });
  }
  for (const skip of layered.skipped) {
    reports.push({
      name: skippedName(skip),
      fate: "skipped",
      origin: skip.layer,
      bytes: undefined,
      reason: skip.reason,
    });
  }
  for (const skip of stepSkipped) {
    reports.push({
      name: skip.name,
      fate: "skipped",
      origin: "step",
      bytes: undefined,
      reason: skip.reason,
    });
  }
  // The layered env is already in name order: only drops and skips need sorting in.
  if (reports.length === layered.env.size) return reports;
  return reports.sort((a, b) => compareNames(a.name, b.name));
}

const NO_STEP_VALUES: {
  readonly env: ReadonlyMap<string, string>;
  readonly skipped: readonly StepValueSkip[];
} = Object.freeze({ env: freezeMap(new Map<string, string>()), skipped: Object.freeze([]) });

/**
 * Plans a bash step without touching the file system or spawning: the
 * interpreter, every variable's fate, the spill plan, the trimming and the
 * exact footprint. Throws EnvBudgetError when protected variables alone do
 * not fit, SpillError when a value that must spill contains NUL.
 */
export function planBashStep(
  host: BashStepHost,
  command: string,
  options: BashStepOptions = {},
): BashStepPlan {
  return planWithInvocation(host, command, options, host.logger).plan;
}

/** The plan and the invocation it leads to, built once (runBashStep runs that invocation). */
function planWithInvocation(
  host: BashStepHost,
  command: string,
  options: BashStepOptions,
  log: Logger | undefined,
): { readonly plan: BashStepPlan; readonly invocation: BashInvocation } {
  validateCommand(command);
  validateOptions(options);
  if (options.maxEnvValueBytes !== undefined) {
    host.retiredFields?.({
      name: options.step ?? UNNAMED_STEP,
      maxEnvValueBytes: options.maxEnvValueBytes,
    });
  }
  const maxUntrustedKeys = host.maxUntrustedKeys ?? DEFAULT_MAX_UNTRUSTED_KEYS;
  // Far too many keys: refused before any per-key work (O(1) for Maps).
  assertUntrustedKeyCount([options.context, options.values], maxUntrustedKeys, "bash");
  const limits = options.limits ?? probeLimits();
  const interpreter = host.interpreter();
  // Aliases only for declared bare names (or all, under the compat preset); the
  // layering checks them against the declaration and the denylist again.
  const steps =
    options.values === undefined
      ? NO_STEP_VALUES
      : stepValueEnv(options.values, {
          prefix: host.stepPrefix,
          aliases: host.aliases ?? false,
          maxUntrustedKeys,
        });
  const layered = host.buildEnv({
    ...(options.context === undefined ? {} : { context: options.context }),
    stepValues: steps.env,
    ...(options.extra === undefined ? {} : { extra: options.extra }),
    ...(options.correlationId === undefined ? {} : { correlationId: options.correlationId }),
  });
  const tmpdir = options.tmpdir ?? host.tmpdir() ?? osTmpdir();
  const { spill, bounded, forceFile } = fitStep(
    host,
    interpreter,
    command,
    layered,
    limits,
    options,
    log,
  );
  const invocation = stepInvocation(interpreter, command, spill, layered.env, options, forceFile);
  // The per-variable report is for explaining a plan (the CLI, a host's own
  // view); running the step never reads it, so it is built on first read.
  let variables: readonly VariableReport[] | undefined;
  const plan: BashStepPlan = {
    interpreter,
    limits,
    layered,
    stepSkipped: steps.skipped,
    spill,
    bounded,
    scriptMode: invocation.mode,
    tmpdir,
    footprint: bounded.footprint,
    get variables(): readonly VariableReport[] {
      variables ??= Object.freeze(variableReports(layered, steps.skipped, spill, bounded));
      return variables;
    },
  };
  return { plan, invocation };
}

/**
 * The spill plan and the trimming of one step. Untrusted entries (context and
 * step values) carry their whole cost: their names and values inline, and
 * the preamble lines spilled values add to argv. So the trusted variables are
 * judged with the argv of no spill at all; when the preamble does not fit
 * beside them, the script goes through a descriptor (argv then holds a short
 * loader), and when even that does not fit, nothing spills and every step
 * value that would have is skipped ("aggregate_env_budget").
 */
function fitStep(
  host: BashStepHost,
  interpreter: string,
  command: string,
  layered: LayeredEnv,
  limits: Pick<Limits, "execLimit" | "maxArgStrlen">,
  options: BashStepOptions,
  stepLog: Logger | undefined,
): { readonly spill: SpillPlan; readonly bounded: BoundedEnv; readonly forceFile: boolean } {
  const env = layered.env;
  const sizerOf = (forceFile: boolean) =>
    bashArgvSizer({
      bash: interpreter,
      command,
      value: (name) => env.get(name) ?? "",
      firstSlot: firstSpillSlot(options.stdio),
      bashArgs: BASH_OPTIONS,
      forceFile,
    });
  const sizer = sizerOf(false);
  const log = stepLog === undefined ? {} : { log: stepLog };
  const spill = planSpill({
    env,
    stepNames: layered.stepValueNames,
    file: interpreter,
    argvBytes: sizer,
    limits,
    ...log,
  });
  // The spill plan measured the same exec with the same model: when it fits,
  // trimming has nothing to do and the inline env is the env.
  if (spill.fits) {
    const bounded: BoundedEnv = {
      env: spill.inline,
      dropped: [],
      skipped: [],
      footprint: spill.footprint,
      limit: limits.execLimit,
      fits: true,
    };
    return { spill, bounded, forceFile: false };
  }
  const trustedArgv = sizer([]);
  const bound = (argv: SpillPlan["argv"]): BoundedEnv =>
    boundedEnv({
      env: spill.inline,
      inheritedNames: inheritedNames(layered),
      untrustedNames: untrustedNames(layered),
      protected: host.protected,
      file: interpreter,
      argv,
      trustedArgv,
      limits,
      sizes: spill.sizes,
      ...log,
    });
  const bounded = bound(spill.argv);
  if (bounded.fits || spill.spilled.length === 0) return { spill, bounded, forceFile: false };
  // The preamble did not fit inline: the script through a descriptor.
  const names = spill.spilled.map(({ name }) => name);
  const fileArgv = sizerOf(true)(names);
  const throughFile = bound(fileArgv);
  if (throughFile.fits) {
    return {
      spill: replanned(spill, spill.spilled, fileArgv, throughFile),
      bounded: throughFile,
      forceFile: true,
    };
  }
  // Not even the loader fits beside the trusted variables: nothing spills.
  const alone = bound(trustedArgv);
  const unspilled: SizedName[] = spill.spilled.map(({ name, bytes }) => ({ name, bytes }));
  for (const { name, bytes } of unspilled) {
    (stepLog ?? logger()).warn(
      { variable: name, bytes, reason: "aggregate_env_budget" },
      "untrusted variable skipped to fit the exec limit",
    );
  }
  const bounded2: BoundedEnv = { ...alone, skipped: [...unspilled, ...alone.skipped] };
  return {
    spill: replanned(spill, [], trustedArgv, bounded2),
    bounded: bounded2,
    forceFile: false,
  };
}

/** `spill` with the argv the step will really have (its footprint that of `bounded`). */
function replanned(
  spill: SpillPlan,
  spilled: SpillPlan["spilled"],
  argv: SpillPlan["argv"],
  bounded: BoundedEnv,
): SpillPlan {
  return {
    inline: spill.inline,
    get sizes(): ReadonlyMap<string, number> {
      return spill.sizes;
    },
    spilled,
    dropped: spill.dropped,
    footprint: bounded.footprint,
    fits: bounded.fits,
    argv,
  };
}

/** The invocation a plan leads to: the same function sizes the plan and builds the real argv. */
function stepInvocation(
  interpreter: string,
  command: string,
  spill: SpillPlan,
  env: ReadonlyMap<string, string>,
  options: BashStepOptions,
  forceFile: boolean,
): BashInvocation {
  return bashInvocation({
    bash: interpreter,
    bashArgs: BASH_OPTIONS,
    forceFile,
    command,
    spills: spillReads(
      spill.spilled.map(({ name }) => name),
      (name) => env.get(name) ?? "",
    ),
    firstSlot: firstSpillSlot(options.stdio),
  });
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
  options: BashStepOptions = {},
): StepHandle<BashStepResult> {
  const given = options as Partial<BashStepOptions> | null;
  const identity = stepIdentity(given?.step, given?.correlationId, host.correlationId);
  const log = stepLogger(host.logger, identity);
  const startedAt = performance.now();
  let started: StartedStep;
  try {
    started = startStep(host, command, options, log);
  } catch (error) {
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
  readonly child: Subprocess<SpawnResult<string | null>>;
  readonly plan: BashStepPlan;
}

/** The result a step resolves with: spawn's, plus what the plan decided (names and sizes). */
function stepResult(
  result: SpawnResult<string | null>,
  plan: BashStepPlan,
  all: string | undefined,
): BashStepResult {
  const stdout = typeof result.stdout === "string" ? result.stdout : "";
  return {
    ...result,
    ...(all === undefined ? {} : { all }),
    output: stdout.trimEnd(),
    interpreter: plan.interpreter,
    scriptMode: plan.scriptMode,
    spilled: plan.spill.spilled,
    dropped: [
      ...plan.spill.dropped,
      ...plan.bounded.dropped.map((d) => ({ ...d, reason: "trimmed" })),
    ],
    skipped: planSkips(plan),
  };
}

/** Plans the step and starts bash (synchronously); throws what planning or starting throws. */
function startStep(
  host: BashStepHost,
  command: string,
  options: BashStepOptions,
  log: Logger,
): StartedStep {
  const { plan, invocation } = planWithInvocation(host, command, options, log);
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
  const descriptorOptions = {
    tmpdir: plan.tmpdir,
    binding: nativeBinding(),
    ...(options.spillKinds === undefined ? {} : { kinds: options.spillKinds }),
  };
  const opened: SpillDescriptor[] = [];
  // No encoding option: captured streams are strings, the others null.
  let child: Subprocess<SpawnResult<string | null>>;
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
      env: plan.bounded.env,
      argv0: plan.interpreter,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
      ...(options.killSignal === undefined ? {} : { killSignal: options.killSignal }),
      ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.input === undefined ? {} : { input: options.input }),
      stdio,
      ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
      ...(options.contain === undefined ? {} : { contain: options.contain }),
      processGroup: true,
      cleanup: options.cleanup ?? host.cleanup ?? true,
      reject: options.reject ?? true,
    });
  } finally {
    // spawn has started the child (or failed) synchronously: the child holds
    // its own copies now, and the parent's must not outlive this step.
    for (const descriptor of opened) descriptor.close();
  }
  return { child, plan };
}

/** Every untrusted entry the plan leaves out, by name and reason: the result's `skipped`. */
export function planSkips(
  plan: BashStepPlan,
): { readonly name: string; readonly reason: string }[] {
  return [
    ...plan.layered.skipped.map((s) => ({ name: skippedName(s), reason: s.reason })),
    ...plan.bounded.skipped.map((s) => ({ name: s.name, reason: "aggregate_env_budget" })),
    ...plan.stepSkipped.map((s) => ({ name: s.name, reason: s.reason })),
  ];
}
