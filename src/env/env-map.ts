/**
 * Reading a host-supplied environment (a record such as process.env, or a
 * Map) into a prototype-free Map, checked for representability only.
 *
 * Pure; throws InvalidEnvError naming the variable, never its value.
 */

import { displayName, InvalidEnvError } from "../errors.js";
import { assertEnvName, assertEnvValue } from "./env-input.js";

/**
 * Copies an environment into a fresh Map: a record's own enumerable string
 * keys (so `__proto__` and `constructor` are ordinary names; accessors are
 * read as their current value) or a Map's entries; undefined values are
 * skipped; `undefined`/`null` input gives an empty map when `optional`.
 * Names must be non-empty, without '=' or NUL; values strings without NUL;
 * neither may hold a lone surrogate. Throws InvalidEnvError otherwise.
 */
export function envMapOf(input: unknown, label: string, optional = true): Map<string, string> {
  const out = new Map<string, string>();
  if ((input === undefined || input === null) && optional) return out;
  const add = (name: unknown, value: unknown): void => {
    if (value === undefined) return;
    assertEnvName(name, label);
    if (typeof value !== "string") {
      throw new InvalidEnvError(
        `${label}: the value of ${displayName(name)} must be a string`,
        name,
      );
    }
    assertEnvValue(name, value, label);
    out.set(name, value);
  };
  if (input instanceof Map) {
    for (const [name, value] of input) add(name, value);
  } else if (input !== null && typeof input === "object" && !Array.isArray(input)) {
    for (const name of Object.keys(input)) {
      add(name, Object.getOwnPropertyDescriptor(input, name)?.value);
    }
  } else {
    throw new InvalidEnvError(`${label}: expected a record or a Map`);
  }
  return out;
}
