/**
 * The options of a bash step (runtime.bash, planBash): the step envelope and
 * spawn's controls from the one table in step-options.ts, plus what only a
 * bash step has (step values, the spill directory, `all`), and their checks.
 */
import type { StepValues } from "../env/step-values.js";
import { assertRecordOrMap } from "../env/untrusted-keys.js";
import { InvalidEnvError } from "../errors.js";
import { assertKnownOptions, knownKeys } from "../known-options.js";
import { assertLimitsOption } from "../limits.js";
import type { ContainOption } from "../spawn/contain.js";
import type { SpawnOptions } from "../spawn/spawn-options.js";
import type { DescriptorKind } from "./spill-files.js";
import {
  BASH_SPAWN_OPTION_KEYS,
  type BashSpawnOptions,
  STEP_ENVELOPE_KEYS,
  type StepEnvelopeOptions,
} from "./step-options.js";

/** The step name retired-field notices use when a step has none. */
export const UNNAMED_STEP = "(unnamed step)";

/** runtime.bash's options: the step envelope, spawn's controls (step-options.ts), and its own. */
export interface BashStepOptions extends StepEnvelopeOptions, BashSpawnOptions {
  /** Step values: RECIPE_VAR_<name>, nested RECIPE_VAR_<a>__<b>, and the upper-case alias where the runtime declares it. */
  readonly values?: StepValues;
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
  /** The step's stdio, as spawn's `stdio` (e.g. "inherit" to stream). Default: stdout and stderr captured. */
  readonly stdio?: SpawnOptions["stdio"];
  /** Also collect stdout and stderr interleaved line by line, as the result's `all`. Default false. */
  readonly all?: boolean;
  /**
   * SIGKILL the step's process group when the host ends, however it ends
   * (spawn's `cleanup`). Default: the runtime's `cleanup`, which defaults to true.
   */
  readonly cleanup?: boolean;
  /**
   * Kill everything the step starts when it ends (spawn's `contain`,
   * docs/containment.md). Default: the runtime's `contain`, which defaults to
   * "best-effort" for bash steps (contained wherever the host can;
   * `result.contained` says), and to none for a step with `cleanup: false`
   * (it may outlive its host).
   */
  readonly contain?: ContainOption;
  /**
   * Accepted and ignored, with one warning per step name: the amplihack
   * recipe runner's `max_env_value_bytes` truncated values; here oversized
   * values are spilled, never truncated.
   */
  readonly maxEnvValueBytes?: unknown;
}

/** The keys only a bash step has (the rest: the envelope and spawn's controls). */
export const BASH_OWN_OPTION_KEYS = knownKeys<
  Omit<BashStepOptions, keyof StepEnvelopeOptions | keyof BashSpawnOptions>
>({
  values: true,
  tmpdir: true,
  spillKinds: true,
  all: true,
  maxEnvValueBytes: true,
});

/** The keys runtime.bash and planBash accept; any other key is a TypeError. */
export const BASH_STEP_OPTION_KEYS: ReadonlySet<string> = knownKeys(
  {},
  BASH_OWN_OPTION_KEYS,
  STEP_ENVELOPE_KEYS,
  BASH_SPAWN_OPTION_KEYS,
);

/**
 * Throws TypeError for an unknown key or a wrong-typed value the step itself
 * reads; the options spawn reads (timeout, input, stdio…) are checked by spawn.
 */
export function validateBashOptions(options: unknown): asserts options is BashStepOptions {
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

/** Throws TypeError for a non-string command, InvalidEnvError for NUL or a lone surrogate. */
export function validateCommand(command: unknown): asserts command is string {
  if (typeof command !== "string") throw new TypeError("bash: command must be a string");
  if (command.includes("\0")) throw new InvalidEnvError("bash: the command contains NUL");
  if (!command.isWellFormed()) {
    throw new InvalidEnvError("bash: the command contains a lone UTF-16 surrogate");
  }
}
