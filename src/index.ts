/**
 * exactspawn — start Linux child processes with an exact, curated environment
 * that always fits the kernel's exec limits.
 */

export { type EnvEntry, type EnvInput, type EnvValue, envEntries } from "./env-input.js";
export {
  compareNames,
  EnvBudgetError,
  InvalidEnvError,
  type SizedName,
  type SystemError,
  systemError,
} from "./errors.js";
export {
  ARGV_RESERVE,
  ENV_BUDGET_FLOOR,
  type ExecFootprint,
  envByteBudget,
  envPairBytes,
  execFits,
  execLimitForStack,
  type Limits,
  MAX_ARG_STRLEN,
  type OversizedString,
  PER_VALUE_ENV_CAP,
  probeLimits,
} from "./limits.js";
export { type Logger, setLogger } from "./log.js";
export { disableNative, type NativeStatus, nativeStatus } from "./native.js";
export type {
  EngineExit,
  ResourceUsage,
  StdioSlot,
} from "./spawn/engine.js";
export { FallbackUnsupportedError } from "./spawn/fallback-engine.js";
export { spawn } from "./spawn/spawn.js";
export {
  type FailureReason,
  type OffendingString,
  SpawnError,
  SubprocessError,
} from "./spawn/spawn-errors.js";
export type { SpawnOptions } from "./spawn/spawn-options.js";
export { type SpawnResult, Subprocess } from "./spawn/subprocess.js";
