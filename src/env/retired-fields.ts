/**
 * Retired step fields. `maxEnvValueBytes` (the recipe runner's `max_env_value_bytes`)
 * once truncated large values to avoid E2BIG; the spill now keeps every env
 * string under MAX_ARG_STRLEN without a per-step setting, so the field is
 * accepted, ignored, and warned about once per step.
 */
import { ownProperties } from "../known-options.js";
import { type Logger, logger } from "../log.js";

/** The fields of a step this module looks at. */
export interface StepWithRetiredFields {
  /** The step's name or id, used in the warning and to warn only once. */
  readonly name: string;
  /** Retired: ignored. */
  readonly maxEnvValueBytes?: unknown;
}

export interface RetiredFieldNotice {
  readonly step: string;
  readonly field: "maxEnvValueBytes";
  readonly message: string;
}

/**
 * Returns a checker that, for a step carrying `maxEnvValueBytes`, logs one
 * WARN and returns the notice the first time it sees that step name, and
 * returns null otherwise. The field's value is ignored and never logged.
 * Each checker has its own memory (one per recipe run or runtime).
 */
export function retiredFieldWarner(
  given: { readonly log?: Logger; readonly context?: string } = {},
): (step: StepWithRetiredFields) => RetiredFieldNotice | null {
  // Own properties only (known-options.ts): no inherited logger.
  const options = ownProperties(given);
  const warned = new Set<string>();
  return (step) => {
    if (step.maxEnvValueBytes === undefined || warned.has(step.name)) return null;
    warned.add(step.name);
    const where = options.context === undefined ? "" : `${options.context}: `;
    const message =
      `${where}step '${step.name}': field 'maxEnvValueBytes' is retired and ignored; ` +
      "oversized values are spilled to private files automatically, so remove it";
    (options.log ?? logger()).warn({ step: step.name, field: "maxEnvValueBytes" }, message);
    return { step: step.name, field: "maxEnvValueBytes", message };
  };
}
