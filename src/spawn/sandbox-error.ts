/** The error a sandbox that cannot be applied as asked rejects a spawn with. */
import type { SandboxPart } from "./sandbox.js";

/** The sandbox cannot be applied as asked; nothing was started. */
export class SandboxError extends Error {
  override readonly name = "SandboxError";
  readonly code:
    | "ERR_EXACTSPAWN_SANDBOX_UNAVAILABLE"
    | "ERR_EXACTSPAWN_SANDBOX_CONFLICT"
    | "ERR_EXACTSPAWN_SANDBOX_PATH";
  /** For UNAVAILABLE: the parts this machine cannot enforce. */
  readonly missing: readonly SandboxPart[];
  /** For PATH: the option field (`writable[1]`) and the symbolic link that was refused. */
  readonly field: string | undefined;
  readonly path: string | undefined;
  constructor(
    code: SandboxError["code"],
    message: string,
    missing: readonly SandboxPart[] = [],
    where?: { field: string; path: string },
  ) {
    super(message);
    this.code = code;
    this.missing = missing;
    this.field = where?.field;
    this.path = where?.path;
  }
}
