/** Plans the bash step a command line describes (shared by `explain` and `run --verbose`). */
import { createRuntime, type Runtime } from "../runtime.js";
import type { BashStepOptions, BashStepPlan } from "../spawn/bash-step.js";
import type { StepRequest } from "./step-options.js";

/** The bash-step options for a request (context, values, limits). */
export function stepOptions(request: StepRequest): BashStepOptions {
  return {
    ...(request.context === undefined ? {} : { context: request.context }),
    values: request.values,
    limits: request.limits,
  };
}

/** A runtime for the request, and its plan. Throws what createRuntime and planBash throw. */
export function planStep(request: StepRequest): { runtime: Runtime; plan: BashStepPlan } {
  const runtime = createRuntime(request.runtime);
  const plan = runtime.planBash(request.command, stepOptions(request));
  request.log.debug(
    {
      variables: plan.variables.length,
      spilled: plan.spill.spilled.length,
      footprint: plan.footprint,
      execLimit: plan.limits.execLimit,
      scriptMode: plan.scriptMode,
    },
    "exactspawn: planned a bash step",
  );
  return { runtime, plan };
}
