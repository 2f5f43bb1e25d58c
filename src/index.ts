/**
 * exactspawn — start Linux child processes with an exact, curated environment
 * that always fits the kernel's exec limits.
 */

// ---- Spill, bounded environment and bash-step script (issue #5) ----
export { type BoundedEnv, type BoundedEnvInput, boundedEnv } from "./env/bounded-env.js";
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
  SpillError,
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
export {
  type BashArgvSizerInput,
  type BashInvocation,
  type BashInvocationInput,
  bashArgvSizer,
  bashInvocation,
  composeScript,
  INLINE_SCRIPT_MAX_BYTES,
  scriptNeedsFile,
} from "./spawn/bash-script.js";
export {
  PREAMBLE_FAILURE_STATUS,
  renderPreamble,
  type SpillFileRef,
  singleQuote,
} from "./spawn/preamble.js";
export {
  type ScriptFile,
  type SpillFiles,
  type TempFileOptions,
  writeScriptFile,
  writeSpillFiles,
} from "./spawn/spill-files.js";
