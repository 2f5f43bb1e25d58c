/**
 * Whether a child has already exited though its exit is not yet delivered:
 * a zombie nobody has reaped. A host whose event loop was busy past a
 * deadline runs the timer before the exit callback; the timeout's signal
 * then reaches a zombie (pidfd_send_signal and kill succeed on one), and
 * without this check a child that exited 0 in time would be reported as
 * timed out (issue 29 item 4). The rule this serves, in deadline-plan.ts:
 * an ending counts only if it found the leader running.
 *
 * Reads /proc/<pid>/stat (proc(5), field 3, the state after the command's
 * closing parenthesis). The pid cannot name another process: the caller
 * asks only while the child is unreaped, which pins its pid. Total: false
 * when the state cannot be read.
 */
import { readFileSync } from "node:fs";

/** True when `pid` (an unreaped child of this process) is a zombie. */
export function exitedUnreaped(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat[stat.lastIndexOf(")") + 2] === "Z";
  } catch {
    return false;
  }
}
