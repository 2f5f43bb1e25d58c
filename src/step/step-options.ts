/**
 * The one option table of a runtime's two step kinds (runtime.bash and
 * runtime.spawn): the envelope both share (identity, context, trusted
 * extras, limits), and the spawn controls each passes on to `spawn` with
 * rest destructuring. A control added to spawn's table reaches both step
 * kinds here, unless it is one a step decides itself (listed below, each
 * with why), so the two front doors cannot drift apart.
 */
import type { ContextInput } from "../env/context-export.js";
import { knownKeys } from "../known-options.js";
import type { Limits } from "../limits.js";
import { SPAWN_OPTION_KEYS, type SpawnOptions } from "../spawn/spawn-options.js";

/** What every step of a runtime takes besides spawn's controls. */
export interface StepEnvelopeOptions {
  /** Untrusted context, exported through the runtime's context policy. */
  readonly context?: ContextInput;
  /** Trusted per-call variables (above the overlay, below host values). */
  readonly extra?: Readonly<Record<string, string | undefined>> | ReadonlyMap<string, string>;
  /**
   * The correlation variable's value for this step, and the id its errors and
   * log events carry. Default: the runtime's; without one, a generated id
   * names the step in errors and logs only (not in the environment).
   */
  readonly correlationId?: string;
  /** The step's name: on every error (`error.step`, and in the message) and log event of the step. */
  readonly step?: string;
  /** Limits to plan against. Default probeLimits() (with the step's own `rlimits.stack`, if set). */
  readonly limits?: Pick<Limits, "execLimit" | "maxArgStrlen">;
}

/** The envelope's keys. */
export const STEP_ENVELOPE_KEYS = knownKeys<StepEnvelopeOptions>({
  context: true,
  extra: true,
  correlationId: true,
  step: true,
  limits: true,
});

/**
 * spawn's options a runtime decides for every step: `env` (the layered,
 * bounded environment is the point of a runtime) and `path` (a file is
 * resolved against the parent's PATH snapshot).
 */
type RuntimeDecided = "env" | "path";

/** spawn's controls as runtime.spawn takes them. */
export type StepSpawnOptions = Readonly<Omit<SpawnOptions, RuntimeDecided>>;

/**
 * What a bash step decides besides: `argv0` (bash is started as its own
 * absolute path) and `processGroup` (a step always leads a group of its own,
 * so a timeout, an abort and cleanup reach everything it started).
 */
type BashDecided = "argv0" | "processGroup";

/** spawn's controls as runtime.bash takes them. */
export type BashSpawnOptions = Readonly<Omit<SpawnOptions, RuntimeDecided | BashDecided>>;

function without(keys: ReadonlySet<string>, drop: readonly string[]): ReadonlySet<string> {
  return new Set([...keys].filter((key) => !drop.includes(key)));
}

const RUNTIME_DECIDED: readonly RuntimeDecided[] = ["env", "path"];
const BASH_DECIDED: readonly BashDecided[] = ["argv0", "processGroup"];

/** spawn's keys runtime.spawn passes on. */
export const STEP_SPAWN_OPTION_KEYS = without(SPAWN_OPTION_KEYS, RUNTIME_DECIDED);
/** spawn's keys runtime.bash passes on. */
export const BASH_SPAWN_OPTION_KEYS = without(STEP_SPAWN_OPTION_KEYS, BASH_DECIDED);
