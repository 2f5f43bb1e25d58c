/**
 * Layering: the one place that decides which value each variable of a child
 * environment takes, and records where it came from.
 *
 * Layers, lowest precedence first (a higher layer always wins):
 *   inherited → context → step → session → overlay → extra → host → grant → correlation
 * Untrusted layers (context, step values) are checked before they are
 * applied: a bare name (outside the step prefix and the context namespace)
 * must be one the host declared (`bareNames`, or "any" under the compat
 * preset), and every name against the denylist, so they can never set an
 * undeclared or reserved name; everything
 * above them is trusted host configuration and is only checked for
 * representability (see trustedEnvMap).
 *
 * Pure; no I/O, no logging (context skips were logged by the exporter).
 */

import { compareNames, displayName, InvalidEnvError } from "../errors.js";
import { ownProperties } from "../known-options.js";
import type { ContextExport, ContextSkip } from "./context-export.js";
import { type Denylist, type DenylistScope, isUnsafeValue, matchesDenylist } from "./denylist.js";
import { assertEnvValue } from "./env-input.js";
import { envMapOf } from "./env-map.js";
import type { InheritedDrop } from "./inherited.js";
import { asciiUpper } from "./names.js";

/** The layers, lowest precedence first. */
export const ENV_LAYERS = Object.freeze([
  "inherited",
  "context",
  "step",
  "session",
  "overlay",
  "extra",
  "host",
  "grant",
  "correlation",
] as const);

export type EnvLayer = (typeof ENV_LAYERS)[number];

/** Why a step value was not applied. */
export type StepSkipReason =
  | "invalid_identifier"
  | "reserved_name"
  | "unsafe_value"
  /** A bare (un-prefixed) name the host did not declare in `bareNames`. */
  | "undeclared_name"
  /** Beyond the runtime's maxUntrustedKeys (see untrusted-keys.ts). */
  | "too_many_keys";

/** A skipped entry of an untrusted layer, tagged with its layer. */
export type LayerSkip =
  | (ContextSkip & { readonly layer: "context" })
  | {
      readonly layer: "step";
      readonly key: string;
      readonly name: string;
      readonly reason: StepSkipReason;
    };

export interface LayerInput {
  /** The inherited base (already filtered). */
  readonly inherited: ReadonlyMap<string, string>;
  /** Drops made while building the inherited base, passed through to the result. */
  readonly inheritedDrops?: readonly InheritedDrop[];
  /** Untrusted entries left out before layering (the key bound), reported first in `skipped`. */
  readonly capped?: readonly LayerSkip[] | undefined;
  /** The exported context (already checked by contextEnvPairs). */
  readonly context?: ContextExport | undefined;
  /** Step values, already named by the step-value planner. Untrusted: names are checked here. */
  readonly stepValues?: ReadonlyMap<string, string> | undefined;
  /** Trusted layers, already validated by trustedEnvMap. */
  readonly session?: ReadonlyMap<string, string> | undefined;
  readonly overlay?: ReadonlyMap<string, string> | undefined;
  readonly extra?: ReadonlyMap<string, string> | undefined;
  readonly host?: ReadonlyMap<string, string> | undefined;
  readonly grants?: ReadonlyMap<string, string> | undefined;
  /** The correlation variable, applied last. */
  readonly correlation?: readonly [name: string, value: string] | undefined;
  /** The compiled denylist used for step-value names. */
  readonly denylist: Denylist;
  /** The step-value prefix: names under it are the step layer's own. */
  readonly stepPrefix: string;
  /** Windows-style names: variables whose names differ only in ASCII case are one variable. */
  readonly caseInsensitive?: boolean | undefined;
  /**
   * The bare names an untrusted layer may set: a set of host-declared names
   * (ASCII upper-case), or "any" (the recipe-runner-compat preset: every name
   * the denylist allows). Default: none — an untrusted name must then be under
   * the step prefix or the context namespace.
   */
  readonly bareNames?: ReadonlySet<string> | "any" | undefined;
  /** The context namespace (e.g. "CTX_"): context names under it are not bare. */
  readonly contextNamespace?: string | undefined;
}

export interface LayeredEnv {
  /** The final environment, sorted by name (code unit order). */
  readonly env: ReadonlyMap<string, string>;
  /** For each final name, the layer its value came from. */
  readonly origin: ReadonlyMap<string, EnvLayer>;
  /** Final names whose value came from the step layer, sorted. */
  readonly stepValueNames: readonly string[];
  /** Entries of untrusted layers that were not applied. */
  readonly skipped: readonly LayerSkip[];
  /** Inherited variables left out of the base. */
  readonly dropped: readonly InheritedDrop[];
}

/** Final names whose value came from the inherited layer: the only ones budget trimming may drop. */
export function inheritedNames(layered: Pick<LayeredEnv, "origin">): Set<string> {
  const names = new Set<string>();
  for (const [name, layer] of layered.origin) if (layer === "inherited") names.add(name);
  return names;
}

/** Final names whose value came from the exported context. */
export function contextNames(layered: Pick<LayeredEnv, "origin">): Set<string> {
  const names = new Set<string>();
  for (const [name, layer] of layered.origin) if (layer === "context") names.add(name);
  return names;
}

/**
 * Final names whose value came from an untrusted layer (the exported context
 * or step values, empty and aliased ones included): under budget pressure
 * they are skipped before any trusted variable is dropped.
 */
export function untrustedNames(layered: Pick<LayeredEnv, "origin">): Set<string> {
  const names = new Set<string>();
  for (const [name, layer] of layered.origin) {
    if (layer === "context" || layer === "step") names.add(name);
  }
  return names;
}

const STEP_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Validates a trusted layer (record of own enumerable keys, or Map) for
 * representability only: names non-empty without '=' or NUL, values strings
 * without NUL, neither with a lone surrogate. Undefined values are skipped.
 * Returns a fresh prototype-free Map (a snapshot). Throws InvalidEnvError
 * naming the layer and variable, never a value.
 */
export function trustedEnvMap(input: unknown, label: string): Map<string, string> {
  return envMapOf(input, label, true);
}

/**
 * Applies the layers in precedence order and reports each final name's
 * origin. Pure. Throws InvalidEnvError when a step value is not a string or
 * cannot be represented (NUL, lone surrogate) — an error before spawn, never
 * echoing the value; every other problem of an untrusted entry is a skip.
 */
export function layerEnv(given: LayerInput): LayeredEnv {
  // Own properties only (known-options.ts): an inherited layer is no layer.
  const input = ownProperties(given);
  // Case-sensitive names (the Linux rule): the layers below the step values,
  // the step values and the layers above them are collected apart and merged
  // in name order at the end, each set already sorted or small. In
  // case-insensitive mode every layer goes to `below`, keyed by the ASCII
  // upper-case form, and `spelling` keeps the winning layer's spelling.
  const caseInsensitive = input.caseInsensitive === true;
  const below = new Layered();
  const above = caseInsensitive ? below : new Layered();
  const spelling = caseInsensitive ? new Map<string, string>() : undefined;
  const step: StepLayer = { names: [], values: [] };
  const put =
    spelling === undefined
      ? (name: string, value: string, layer: EnvLayer): void => {
          // The step layer is collected by the step loop itself (step.names/values).
          (layer === "inherited" || layer === "context" ? below : above).set(name, value, layer);
        }
      : (name: string, value: string, layer: EnvLayer): void => {
          const key = asciiUpper(name);
          below.set(key, value, layer);
          spelling.set(key, name);
        };
  const skipped: LayerSkip[] = [...(input.capped ?? [])];
  const bareNames = input.bareNames ?? new Set<string>();
  // A bare name is one outside the untrusted layer's own namespace; only declared ones pass.
  const undeclared = (upper: string, namespace: string | undefined): boolean =>
    bareNames !== "any" &&
    !(namespace !== undefined && namespace !== "" && upper.startsWith(namespace)) &&
    !bareNames.has(upper);

  for (const [name, value] of input.inherited) put(name, value, "inherited");
  if (input.context !== undefined) {
    for (const skip of input.context.skipped) {
      skipped.push(Object.freeze({ ...skip, layer: "context" }));
    }
    const namespace =
      input.contextNamespace === undefined ? undefined : asciiUpper(input.contextNamespace);
    const contextScope = { suffixes: false };
    for (const [name, value] of input.context.pairs) {
      // Defence in depth: the exporter already refused these.
      const upper = asciiUpper(name);
      if (matchesDenylist(upper, input.denylist, contextScope)) continue;
      if (undeclared(upper, namespace)) {
        skipped.push(
          Object.freeze({ layer: "context", key: name, name, reason: "undeclared_name" as const }),
        );
        continue;
      }
      put(name, value, "context");
    }
  }
  if (input.stepValues !== undefined) {
    const scope = { ownPrefix: input.stepPrefix };
    const stepPrefix = asciiUpper(input.stepPrefix);
    for (const [name, value] of input.stepValues) {
      // An ASCII identifier: toUpperCase maps exactly a-z, as asciiUpper would.
      const identifier = typeof name === "string" && STEP_IDENTIFIER.test(name);
      const upper = identifier ? name.toUpperCase() : "";
      const reason = !identifier
        ? "invalid_identifier"
        : (stepValueProblem(name, upper, value, input.denylist, scope) ??
          (undeclared(upper, stepPrefix) ? "undeclared_name" : undefined));
      if (reason !== undefined) {
        const key = String(name);
        const shown = identifier ? upper : asciiUpper(key);
        skipped.push(Object.freeze({ layer: "step", key, name: shown, reason }));
        continue;
      }
      if (spelling === undefined) {
        step.names.push(name);
        step.values.push(value);
      } else put(name, value, "step");
    }
  }
  const trusted: readonly [ReadonlyMap<string, string> | undefined, EnvLayer][] = [
    [input.session, "session"],
    [input.overlay, "overlay"],
    [input.extra, "extra"],
    [input.host, "host"],
    [input.grants, "grant"],
  ];
  for (const [layer, origin] of trusted) {
    if (layer === undefined) continue;
    for (const [name, value] of layer) put(name, value, origin);
  }
  if (input.correlation !== undefined) {
    put(input.correlation[0], input.correlation[1], "correlation");
  }

  const env = new Map<string, string>();
  const stepValueNames: string[] = [];
  let origin: Map<string, EnvLayer> | undefined;
  if (spelling === undefined) {
    mergeInOrder(below, byName(step), above, (name, value, layer) => {
      env.set(name, value);
      if (layer === "step") stepValueNames.push(name);
    });
  } else {
    origin = new Map();
    const keys = [...spelling.keys()].sort((a, b) =>
      compareNames(spelling.get(a)!, spelling.get(b)!),
    );
    for (const key of keys) {
      const name = spelling.get(key)!;
      const layer = below.layers.get(key)!;
      env.set(name, below.values.get(key)!);
      origin.set(name, layer);
      if (layer === "step") stepValueNames.push(name);
    }
  }
  return Object.freeze({
    env,
    // Most callers never ask where each variable came from: the map is built on first read.
    get origin(): ReadonlyMap<string, EnvLayer> {
      origin ??= originOf(env, below, new Set(stepValueNames), above);
      return origin;
    },
    stepValueNames: Object.freeze(stepValueNames),
    skipped: Object.freeze(skipped),
    dropped: input.inheritedDrops ?? Object.freeze([]),
  });
}

/** Each final name's layer, in env order: above over the step values over below (case-sensitive layering). */
function originOf(
  env: ReadonlyMap<string, string>,
  below: Layered,
  step: ReadonlySet<string>,
  above: Layered,
): Map<string, EnvLayer> {
  const origin = new Map<string, EnvLayer>();
  for (const name of env.keys()) {
    origin.set(name, above.layers.get(name) ?? (step.has(name) ? "step" : below.layers.get(name)!));
  }
  return origin;
}

/** Variables by key, the last set winning, with the layer each came from. */
class Layered {
  readonly values = new Map<string, string>();
  readonly layers = new Map<string, EnvLayer>();
  set(key: string, value: string, layer: EnvLayer): void {
    this.values.set(key, value);
    this.layers.set(key, layer);
  }
}

/** The accepted step values, in the order they came. */
interface StepLayer {
  readonly names: string[];
  readonly values: string[];
}

/** `step` in name order: itself when it already is (a planner's usual output). */
function byName(step: StepLayer): StepLayer {
  const { names, values } = step;
  for (let i = 1; i < names.length; i++) {
    if (names[i - 1]! > names[i]!) {
      const order = Array.from(names.keys()).sort((a, b) => (names[a]! < names[b]! ? -1 : 1));
      return { names: order.map((k) => names[k]!), values: order.map((k) => values[k]!) };
    }
  }
  return step;
}

/**
 * Calls `add` once per final name, in code-unit order (compareNames), with
 * the value of the highest layer holding it: `above` over the step values
 * over `below`. The step names are unique (they come from one Map).
 */
function mergeInOrder(
  below: Layered,
  step: StepLayer,
  above: Layered,
  add: (name: string, value: string, layer: EnvLayer) => void,
): void {
  // Default sort compares UTF-16 code units, as `<` on strings does.
  const low = [...below.values.keys()].sort();
  const high = [...above.values.keys()].sort();
  let i = 0;
  let j = 0;
  let k = 0;
  const { names, values } = step;
  while (i < low.length || j < names.length || k < high.length) {
    let name = i < low.length ? low[i]! : undefined;
    if (j < names.length && (name === undefined || names[j]! < name)) name = names[j]!;
    if (k < high.length && (name === undefined || high[k]! < name)) name = high[k]!;
    let value = "";
    let layer: EnvLayer = "inherited";
    if (low[i] === name) {
      value = below.values.get(name!)!;
      layer = below.layers.get(name!)!;
      i++;
    }
    if (names[j] === name) {
      value = values[j]!;
      layer = "step";
      j++;
    }
    if (high[k] === name) {
      value = above.values.get(name!)!;
      layer = above.layers.get(name!)!;
      k++;
    }
    add(name!, value, layer);
  }
}

/** The problem of a step value whose name is an identifier (`upper`: its upper-case form). */
function stepValueProblem(
  name: string,
  upper: string,
  value: unknown,
  denylist: Denylist,
  scope: DenylistScope,
): StepSkipReason | undefined {
  if (typeof value !== "string") {
    throw new InvalidEnvError(
      `stepValues: the value of ${displayName(name)} must be a string`,
      name,
    );
  }
  assertEnvValue(name, value, "stepValues");
  if (matchesDenylist(upper, denylist, scope)) return "reserved_name";
  if (isUnsafeValue(upper, value)) return "unsafe_value";
  return undefined;
}
