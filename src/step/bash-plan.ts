/**
 * The plan of one bash step (ARCHITECTURE "One bash step", steps 1-7), pure:
 *
 *   interpreter (parent env only) → layered env (inherited, context, step
 *   values, session, overlay, extra, host, grants, correlation) → spill plan
 *   (per-value cap, then the exact exec budget) → bounded env (trim
 *   non-protected inherited variables, or EnvBudgetError) → inline `bash -c`
 *   or the script through a descriptor (64 KiB rule).
 *
 * No files, no spawn: `explain` shows it, bash-step.ts runs it. Every report
 * carries names, sizes and reasons — never a value.
 */

import { tmpdir as osTmpdir } from "node:os";
import { type BoundedEnv, boundedEnv } from "../env/bounded-env.js";
import type { ContextInput } from "../env/context-export.js";
import { pairBytes } from "../env/env-input.js";
import { freezeMap } from "../env/frozen-map.js";
import { inheritedNames, type LayeredEnv, type LayerSkip, untrustedNames } from "../env/layers.js";
import type { StepWithRetiredFields } from "../env/retired-fields.js";
import { planSpill, type SpillPlan } from "../env/spill-plan.js";
import { type StepValueSkip, stepValueEnv } from "../env/step-values.js";
import { assertUntrustedKeyCount, DEFAULT_MAX_UNTRUSTED_KEYS } from "../env/untrusted-keys.js";
import { compareNames, type SizedName } from "../errors.js";
import { ownProperties } from "../known-options.js";
import { type Limits, limitsWithChildStack, probeLimits } from "../limits.js";
import { type Logger, silentLogger } from "../log.js";
import { childStackSoft, normalizeExecControls } from "../spawn/exec-controls.js";
import {
  type BashStepOptions,
  UNNAMED_STEP,
  validateBashOptions,
  validateCommand,
} from "./bash-options.js";
import { type BashInvocation, bashArgvSizer, bashInvocation } from "./bash-script.js";
import { spillReads } from "./preamble.js";
import { firstSpillSlot } from "./temp-layout.js";
import type { UntrustedSkips } from "./untrusted-skips.js";

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
  /** Called as each step starts: the runtime's first-use notice (inherit-notice.ts). */
  readonly firstUse?: ((log: Logger) => void) | undefined;
  /** The runtime's correlation id: a step's identity when the call gives none (step-identity.ts). */
  readonly correlationId?: string | undefined;
  /** The runtime's bound on untrusted variables (undefined: DEFAULT_MAX_UNTRUSTED_KEYS). */
  readonly maxUntrustedKeys?: number | undefined;
  /** What a skipped untrusted entry does (undefined: "report"). */
  readonly untrustedSkips?: UntrustedSkips | undefined;
}

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
  return planWithInvocation(host, command, ownProperties(options)).plan;
}

/**
 * The plan and the invocation it leads to, built once (runBashStep runs that
 * invocation). `options` is the caller's, read as own properties
 * (ownProperties): nothing inherited is an option.
 */
export function planWithInvocation(
  host: BashStepHost,
  command: string,
  options: BashStepOptions,
): { readonly plan: BashStepPlan; readonly invocation: BashInvocation } {
  validateCommand(command);
  validateBashOptions(options);
  if (options.maxEnvValueBytes !== undefined) {
    host.retiredFields?.({
      name: options.step ?? UNNAMED_STEP,
      maxEnvValueBytes: options.maxEnvValueBytes,
    });
  }
  const maxUntrustedKeys = host.maxUntrustedKeys ?? DEFAULT_MAX_UNTRUSTED_KEYS;
  // Far too many keys: refused before any per-key work (O(1) for Maps).
  assertUntrustedKeyCount([options.context, options.values], maxUntrustedKeys, "bash");
  // The step's own stack limit, when it sets one, sizes its exec (rlimits.stack).
  const limits = limitsWithChildStack(
    options.limits ?? probeLimits(),
    childStackSoft(normalizeExecControls(options)),
  );
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
  // The planners stay quiet: the step reports what they decided once per
  // reason, with its identity (untrusted-skips.ts), and the plan holds every name.
  const log = { log: silentLogger() };
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
