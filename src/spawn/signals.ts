/**
 * Signal names and numbers, as Node's `os.constants.signals` lists them.
 * Pure; throws a TypeError for an unknown name or number.
 */
import { constants } from "node:os";

const byName = constants.signals as Readonly<Record<string, number>>;
const byNumber = new Map<number, string>();
for (const [name, number] of Object.entries(byName)) {
  if (!byNumber.has(number)) byNumber.set(number, name);
}

/** The number of a signal given as "SIGTERM" or 15. */
export function signalNumber(signal: string | number, where = "signal"): number {
  if (typeof signal === "number") {
    if (!Number.isInteger(signal) || signal < 0 || signal > 64) {
      throw new TypeError(`${where}: ${signal} is not a signal number`);
    }
    return signal;
  }
  if (typeof signal === "string") {
    const number = byName[signal];
    if (number !== undefined) return number;
  }
  throw new TypeError(`${where}: unknown signal ${JSON.stringify(signal)}`);
}

/** "SIGTERM" for 15; undefined when the number has no name. */
export function signalName(number: number): string | undefined {
  return byNumber.get(number);
}
