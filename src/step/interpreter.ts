/**
 * Resolves the bash interpreter of a runtime from the parent environment
 * only: an operator pin (`<hostPrefix>BASH`, an absolute path to an
 * executable) first, else `bash` on the parent's PATH. A step value or
 * context key can never choose it: neither is consulted.
 */
import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { InvalidEnvError } from "../errors.js";
import { resolveFile } from "../spawn/resolve-file.js";

export interface InterpreterSource {
  /** The parent environment snapshot. */
  readonly parentEnv: ReadonlyMap<string, string>;
  readonly hostPrefix: string;
}

/**
 * The absolute path of the bash to run. Throws a Node-style ENOENT/EACCES
 * error (syscall "posix_spawn", path "bash") when PATH has none, and an
 * InvalidEnvError when the pin is not an absolute path to an executable file.
 */
export function resolveInterpreter(source: InterpreterSource): string {
  const pinName = `${source.hostPrefix}BASH`;
  const pin = source.parentEnv.get(pinName);
  if (pin !== undefined && pin !== "") {
    if (!isAbsolute(pin)) throw new InvalidEnvError(`${pinName} must be an absolute path`, pinName);
    const stats = statSync(pin, { throwIfNoEntry: false });
    if (stats === undefined || !stats.isFile()) {
      throw new InvalidEnvError(`${pinName} does not name an existing file`, pinName);
    }
    try {
      accessSync(pin, constants.X_OK);
    } catch {
      throw new InvalidEnvError(`${pinName} names a file that is not executable`, pinName);
    }
    return pin;
  }
  try {
    return resolveFile("bash", source.parentEnv.get("PATH"), "/");
  } catch (error) {
    throw explainMissingBash(error, source, pinName);
  }
}

/**
 * The resolver's ENOENT/EACCES (code, errno, syscall, path kept) with what
 * to do in the message: which PATH was searched (by its entry count, never
 * its value) and the two ways to name a bash.
 */
function explainMissingBash(error: unknown, source: InterpreterSource, pinName: string): unknown {
  if (!(error instanceof Error)) return error;
  const path = source.parentEnv.get("PATH");
  const searched =
    path === undefined
      ? "the parent environment has no PATH"
      : path === ""
        ? "the parent environment's PATH is empty"
        : `no executable bash in the ${path.split(":").length} entries of the parent environment's PATH`;
  error.message =
    `${error.message}: cannot find the bash interpreter (${searched}). ` +
    `Give the runtime a parent environment with a PATH that has bash (createRuntime's parentEnv; ` +
    `the CLI's --parent-env file), or pin it with ${pinName}=/absolute/path/to/bash`;
  return error;
}
