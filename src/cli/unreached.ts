/**
 * Values the user named on the command line (`--var`, `--context`,
 * `--context-file`) that would not reach the step: a step value none of
 * whose variables the child gets, or a context key that was skipped (an
 * invalid name, a reserved name, no room in the budget, …). `run` refuses
 * to start such a step unless `--allow-skips`: a silently missing value is
 * worse than an error. Names and reasons only, never values.
 */

import { stepValueEnv } from "../env/step-values.js";
import { displayName } from "../errors.js";
import type { BashStepPlan } from "../step/bash-step.js";
import type { StepRequest } from "./step-options.js";
import { UsageError } from "./usage-error.js";

/** One named value that would not reach the step. */
export interface Unreached {
  readonly option: "--var" | "--context";
  readonly key: string;
  readonly reason: string;
}

const REACHED = new Set(["inline", "spilled"]);

/**
 * Every value of `request` the `plan` leaves out, in command-line order:
 * refused by name or value, given up for the budget (`aggregate_env_budget`)
 * or beyond the key bound (`too_many_keys`). `contextName` gives the name a
 * context key is exported under (the runtime's own rule). Pure.
 */
export function unreachedValues(
  plan: BashStepPlan,
  request: Pick<StepRequest, "values" | "context">,
  stepPrefix: string,
  contextName: (key: string) => string | undefined,
): Unreached[] {
  const byName = new Map(plan.variables.map((v) => [v.name, v]));
  const unreached: Unreached[] = [];
  for (const [key, value] of request.values) {
    // The names this one value would be exported under (prefixed, alias).
    const own = stepValueEnv(new Map([[key, value]]), { prefix: stepPrefix });
    const names = [...own.env.keys()];
    const reached = names.some((name) => {
      const variable = byName.get(name);
      return variable?.origin === "step" && REACHED.has(variable.fate);
    });
    if (reached) continue;
    const refused = [`${stepPrefix}${key}`, ...names]
      .map((name) => byName.get(name))
      .find((v) => v !== undefined && !REACHED.has(v.fate));
    unreached.push({
      option: "--var",
      key,
      reason: refused?.reason ?? own.skipped[0]?.reason ?? "not exported",
    });
  }
  const reported = new Set<string>();
  for (const skip of plan.layered.skipped) {
    if (skip.layer !== "context" || !request.context?.has(skip.key)) continue;
    reported.add(skip.key);
    unreached.push({ option: "--context", key: skip.key, reason: skip.reason });
  }
  // Skips made after export are by exported name: the budget's and the key bound's.
  const byExportedName = new Map<string, string>();
  for (const skip of plan.bounded.skipped) byExportedName.set(skip.name, "aggregate_env_budget");
  for (const skip of plan.layered.skipped) {
    if (skip.layer === "context" && skip.reason === "too_many_keys") {
      byExportedName.set(skip.name, skip.reason);
    }
  }
  if (byExportedName.size === 0 || request.context === undefined) return unreached;
  for (const key of request.context.keys()) {
    if (reported.has(key)) continue;
    const name = contextName(key);
    const reason = name === undefined ? undefined : byExportedName.get(name);
    if (reason !== undefined) unreached.push({ option: "--context", key, reason });
  }
  return unreached;
}

/** The one-line UsageError for unreached values, naming every one of them. */
export function unreachedError(unreached: readonly Unreached[]): UsageError {
  const shown = unreached.map((u) => `${u.option} ${displayName(u.key)} (${u.reason})`);
  const verb = unreached.length === 1 ? "does" : "do";
  return new UsageError(
    `${shown.join(", ")} ${verb} not reach the step ` +
      "(see exactspawn explain); fix it, or pass --allow-skips to run without",
  );
}
