/**
 * exactspawn — start Linux child processes with an exact, curated environment
 * that always fits the kernel's exec limits.
 */

// ---- Spill, bounded environment and bash-step script ----
export { type BoundedEnv, type BoundedEnvInput, boundedEnv } from "./env/bounded-env.js";
// ---- Environment policy: denylist, context export, inherited
// ---- filtering, layering, image restore, and the runtime front door.
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
  DEFAULT_HOST_PREFIX,
  DEFAULT_STEP_PREFIX,
  type Denylist,
  type DenylistAdditions,
  type DenylistOptions,
  isReservedName,
  isUnsafeValue,
  // The amplihack recipe runner's 22 reserved names (SEED_… is their first, deprecated name).
  RECIPE_RUNNER_RESERVED_ENV_NAMES,
  RESERVED_ENV_DENYLIST,
  RESERVED_ENV_PREFIXES,
  RESERVED_ENV_SUFFIXES,
  SEED_RESERVED_ENV_NAMES,
} from "./env/denylist.js";
export {
  type ImageRecordOptions,
  type ImageRestoreOptions,
  recordImageEnv,
  restoreImageEnv,
} from "./env/image-restore.js";
export {
  type EnvSnapshot,
  ESSENTIAL_ENV_NAMES,
  ESSENTIAL_ENV_PREFIXES,
  type InheritedBase,
  type InheritedDrop,
  type InheritedDropReason,
  type InheritedOptions,
  inheritedBase,
  isEssentialName,
  snapshotEnv,
} from "./env/inherited.js";
export {
  ENV_LAYERS,
  type EnvLayer,
  type LayeredEnv,
  type LayerInput,
  type LayerSkip,
  layerEnv,
  type StepSkipReason,
} from "./env/layers.js";
export {
  defaultProtectedNames,
  isProtectedName,
  isSpillableName,
  type ProtectedNames,
} from "./env/names.js";
export {
  type RetiredFieldNotice,
  retiredFieldWarner,
  type StepWithRetiredFields,
} from "./env/retired-fields.js";
export {
  type ArgvBytesFn,
  type ArgvSize,
  type DroppedStepValue,
  planSpill,
  type SpilledVariable,
  type SpillPlan,
  type SpillPlanInput,
} from "./env/spill-plan.js";
export {
  type StepValueEnv,
  type StepValueOptions,
  type StepValueSkip,
  type StepValueSkipReason,
  type StepValues,
  stepValueEnv,
} from "./env/step-values.js";
export { type EnvEntry, type EnvInput, type EnvValue, envEntries } from "./env-input.js";
export {
  compareNames,
  EnvBudgetError,
  InvalidEnvError,
  type SizedName,
  type SkippedName,
  SpillError,
  type SystemError,
  systemError,
  TooManyKeysError,
  UntrustedSkipError,
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
export {
  type BuildEnvOptions,
  createRuntime,
  type EnvRecord,
  type Runtime,
  type RuntimeConfig,
  type RuntimeOptions,
  type RuntimePreset,
} from "./runtime.js";
export {
  type ContainedReport,
  ContainmentError,
  type ContainOption,
  type ContainSettings,
} from "./spawn/contain.js";
export { type CgroupSupport, cgroupSupport } from "./spawn/contain-plan.js";
export type {
  EngineExit,
  ResourceUsage,
  StdioSlot,
} from "./spawn/engine.js";
export type { ExecControlOptions, RlimitName, RlimitValue } from "./spawn/exec-controls.js";
export { FallbackUnsupportedError } from "./spawn/fallback-engine.js";
export type { KnownKeys, OutputOf, ResultOf, SubprocessErrorOf } from "./spawn/output-type.js";
export {
  normalizeSandbox,
  SANDBOX_PARTS,
  SandboxError,
  type SandboxOptions,
  type SandboxPart,
  type SandboxSupport,
  sandboxSupport,
} from "./spawn/sandbox.js";
export { spawn } from "./spawn/spawn.js";
export {
  type FailureReason,
  type OffendingString,
  SpawnError,
  SubprocessError,
} from "./spawn/spawn-errors.js";
export type { SpawnOptions } from "./spawn/spawn-options.js";
export { type SpawnSyncOptions, spawnSync } from "./spawn/spawn-sync.js";
export { type SpawnResult, Subprocess } from "./spawn/subprocess.js";
export {
  type BashArgvSizerInput,
  type BashInvocation,
  type BashInvocationInput,
  bashArgvSizer,
  bashInvocation,
  composeScript,
  INLINE_SCRIPT_MAX_BYTES,
  scriptNeedsFile,
} from "./step/bash-script.js";
export type {
  BashStepOptions,
  BashStepPlan,
  BashStepResult,
  VariableFate,
  VariableReport,
} from "./step/bash-step.js";
export type { LineStream } from "./step/line-hub.js";
export {
  PREAMBLE_FAILURE_STATUS,
  renderPreamble,
  type SpillRead,
  singleQuote,
} from "./step/preamble.js";
export type { RuntimeSpawnOptions } from "./step/runtime-spawn.js";
export {
  type DescriptorKind,
  type DescriptorOptions,
  type SpillDescriptor,
  type SpillValues,
  UnsafeTmpdirError,
  writeScriptDescriptor,
  writeSpillValues,
} from "./step/spill-files.js";
export { StepHandle } from "./step/step-handle.js";
export type { StepIdentity } from "./step/step-identity.js";
