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
  return resolveFile("bash", source.parentEnv.get("PATH"), "/");
}
