/** Plans the bash step a command line describes (shared by `explain` and `run --verbose`). */
import { createRuntime, type Runtime } from "../runtime.js";
import type { BashStepOptions, BashStepPlan } from "../step/bash-step.js";
import type { StepRequest } from "./step-options.js";
import { UsageError } from "./usage-error.js";

/**
 * The runtime a request describes. Its options all come from the command
 * line (lists, the env file), so a refusal is a usage error; createRuntime's
 * messages name options and variables, never values.
 */
export function runtimeFor(request: StepRequest): Runtime {
  try {
    return createRuntime(request.runtime);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Name the option as typed: "allow[0] must …" → "--allow #1 must …".
    throw new UsageError(
      message
        .replace(/^(allow|block)\[(\d+)\]/, (_m, list: string, index: string) => {
          return `--${list} #${Number(index) + 1}`;
        })
        .replace(
          /^bareNames entry (\d+)/,
          (_m, index: string) => `--bare-name #${Number(index) + 1}`,
        )
        .replace(/^bareNames must be an array of names/, "--bare-name expects a NAME")
        .replace(/^preset must be/, "--preset must be"),
    );
  }
}

/** The bash-step options for a request (context, values, limits). */
export function stepOptions(request: StepRequest): BashStepOptions {
  return {
    ...(request.context === undefined ? {} : { context: request.context }),
    values: request.values,
    limits: request.limits,
  };
}

/** The request's plan on `runtime`. Throws what planBash throws. */
export function planStep(runtime: Runtime, request: StepRequest): BashStepPlan {
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
  return plan;
}
