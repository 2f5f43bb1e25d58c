/**
 * exactspawn — start Linux child processes with an exact, curated environment
 * that always fits the kernel's exec limits.
 *
 * The package's front door: what a user needs (ARCHITECTURE.md "Public
 * surface", the option, result and error types). Internals are behind no
 * export at all; test/index.test.ts pins this list, so each addition is a
 * decision.
 */

// ---- Environment policy, usable on its own.
export { type BoundedEnv, type BoundedEnvInput, boundedEnv } from "./env/bounded-env.js";
export {
  type ContextExport,
  type ContextExporter,
  type ContextExportOptions,
  type ContextInput,
  type ContextMode,
  type ContextSkip,
  type ContextSkipReason,
  contextEnvPairs,
  createContextExporter,
} from "./env/context-export.js";
export {
  createDenylist,
  type Denylist,
  type DenylistAdditions,
  isReservedName,
  // The amplihack recipe runner's 22 reserved names.
  RECIPE_RUNNER_RESERVED_ENV_NAMES,
  RESERVED_ENV_DENYLIST,
  RESERVED_ENV_PREFIXES,
  RESERVED_ENV_SUFFIXES,
} from "./env/denylist.js";
export type { EnvInput, EnvValue } from "./env/env-input.js";
export {
  type ImageRecordOptions,
  type ImageRestoreOptions,
  recordImageEnv,
  restoreImageEnv,
} from "./env/image-restore.js";
export {
  ESSENTIAL_ENV_NAMES,
  ESSENTIAL_ENV_PREFIXES,
  type InheritedDrop,
  type InheritedDropReason,
} from "./env/inherited.js";
export type { EnvLayer, LayeredEnv, LayerSkip } from "./env/layers.js";
export { isSpillableName } from "./env/names.js";
export {
  type DroppedStepValue,
  planSpill,
  type SpilledVariable,
  type SpillPlan,
  type SpillPlanInput,
} from "./env/spill-plan.js";
export type { StepValues } from "./env/step-values.js";
// ---- Errors.
export {
  EnvBudgetError,
  InvalidEnvError,
  isStepError,
  type SizedName,
  type SkippedName,
  SpillError,
  type StepError,
  type SystemError,
  TooManyKeysError,
  UntrustedSkipError,
} from "./errors.js";
// ---- Exec limits: the exact kernel model.
export {
  ENV_BUDGET_FLOOR,
  type ExecFootprint,
  envByteBudget,
  envPairBytes,
  execFits,
  type Limits,
  MAX_ARG_STRLEN,
  type OversizedString,
  PER_VALUE_ENV_CAP,
  probeLimits,
} from "./limits.js";
// ---- Logging and the addon.
export { type Logger, setLogger } from "./log.js";
export { disableNative, type NativeStatus, nativeStatus } from "./native.js";
// ---- The runtime: a host's curated environment, bash steps and agent children.
export {
  type BuildEnvOptions,
  createRuntime,
  type EnvRecord,
  type InheritMode,
  type Runtime,
  type RuntimeConfig,
  type RuntimeOptions,
  type RuntimePreset,
} from "./runtime.js";
export {
  type CgroupContainedReport,
  type ContainedReport,
  type ContainMechanism,
  ContainmentError,
  type ContainOption,
  type ContainSettings,
  type LimitEvents,
  type PidNamespaceContainedReport,
} from "./spawn/contain.js";
export {
  type CgroupSupport,
  cgroupSupport,
  type PidNamespaceSupport,
  pidNamespaceSupport,
} from "./spawn/contain-plan.js";
export type { ResourceUsage, StdioSlot } from "./spawn/engine.js";
export type { ExecControlOptions, RlimitName, RlimitValue } from "./spawn/exec-controls.js";
export { FallbackUnsupportedError } from "./spawn/fallback-engine.js";
export { createPipe, type KernelPipe } from "./spawn/kernel-pipe.js";
export type {
  KnownKeys,
  OutputOf,
  ResultOf,
  SubprocessErrorOf,
  SyncResultOf,
} from "./spawn/output-type.js";
export {
  SandboxError,
  type SandboxOptions,
  type SandboxPart,
  type SandboxSupport,
  sandboxSupport,
} from "./spawn/sandbox.js";
// ---- The spawn primitive.
export { spawn } from "./spawn/spawn.js";
export {
  type FailureReason,
  type OffendingString,
  SpawnError,
  SubprocessError,
} from "./spawn/spawn-errors.js";
export type { SpawnOptions, StdioOption } from "./spawn/spawn-options.js";
export { type SpawnSyncOptions, spawnSync } from "./spawn/spawn-sync.js";
export { type InputChunk, InputChunkError, type InputStream } from "./spawn/stream-input.js";
export type { SpawnResult, Subprocess } from "./spawn/subprocess.js";
export type { BashStepOptions } from "./step/bash-options.js";
export type { BashStepPlan, VariableFate, VariableReport } from "./step/bash-plan.js";
export type { BashStepResult } from "./step/bash-step.js";
export type { LineStream } from "./step/line-hub.js";
export type { RuntimeSpawnOptions } from "./step/runtime-spawn.js";
export { UnsafeTmpdirError } from "./step/spill-files.js";
export type { StepHandle } from "./step/step-handle.js";
export type { StepIdentity } from "./step/step-identity.js";
