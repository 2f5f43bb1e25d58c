/**
 * The `sandbox` option: where a child may write, what it may read and
 * execute, and whether it may use the network — enforced by the kernel in the
 * child before exec (no_new_privs, Landlock, a seccomp socket filter) and
 * inherited by everything it starts. See docs/sandbox.md.
 *
 * Policy lives here: validating the host's options (TypeError, never a
 * coercion), resolving paths, checking that writable and executable
 * directories do not overlap unless asked, and failing closed: a part this
 * kernel (or engine) cannot enforce refuses the spawn with a SandboxError
 * unless the host accepted that weaker sandbox by name.
 */
import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { ownItems, ownProperties } from "../known-options.js";
import { nativeBinding, type RawSandbox } from "../native.js";
import { SandboxError } from "./sandbox-error.js";
import { beneath, resolveSandboxPaths } from "./sandbox-paths.js";
import { viewPaths } from "./sandbox-view.js";

export { SandboxError };

/** Parts of a sandbox a host may accept unenforced on a kernel that lacks them. */
export const SANDBOX_PARTS = ["filesystem", "truncate", "ioctl", "network", "syscalls"] as const;
export type SandboxPart = (typeof SANDBOX_PARTS)[number];

export interface SandboxOptions {
  /** Directories (or files) beneath which the child may create, write, truncate, remove and rename. */
  readonly writable: readonly string[];
  /** `"all"` (the default) or the directories/files beneath which it may read. */
  readonly readable?: "all" | readonly string[];
  /** Directories whose files it may execute. Default: the system's program directories that exist. */
  readonly executable?: readonly string[];
  /** Also execute files beneath `writable` (a written file could then be run). Default false. */
  readonly executeWritable?: boolean;
  /** Open sockets other than AF_UNIX (TCP, UDP, raw, netlink…). Default false. */
  readonly network?: boolean;
  /** Parts the host accepts unenforced where this kernel cannot enforce them. Default: none. */
  readonly allowWeaker?: readonly SandboxPart[];
  /** Keep the child's capabilities (a root child keeps root's). Default false: every set emptied. */
  readonly keepCapabilities?: boolean;
  /**
   * Where this host can (see SandboxSupport.readOnlyView), run the child in a
   * private mount view in which everything outside `writable` is read-only.
   * Default true; false never makes one.
   */
  readonly readOnlyView?: boolean;
}

/** A validated sandbox (paths as given, made absolute). */
export interface NormalizedSandbox {
  readonly writable: readonly string[];
  readonly readable: "all" | readonly string[];
  readonly executable: readonly string[] | undefined;
  readonly executeWritable: boolean;
  readonly network: boolean;
  readonly allowWeaker: ReadonlySet<SandboxPart>;
  readonly keepCapabilities: boolean;
  readonly readOnlyView: boolean;
}

/** What this machine's kernel and engine can enforce. */
export interface SandboxSupport {
  /** The native engine is in use (the fallback cannot confine a child). */
  readonly native: boolean;
  /** Landlock ABI version, 0 when unavailable. */
  readonly landlockAbi: number;
  /** A seccomp filter can be installed. */
  readonly seccompFilter: boolean;
  /** A read-only mount view can be made here (docs/sandbox.md, "The read-only mount view"). */
  readonly readOnlyView: boolean;
  /**
   * Why not: `"privilege"` (the host lacks CAP_SYS_ADMIN and cannot make a
   * user namespace with capabilities over its mounts), `"kernel"`
   * (no open_tree, move_mount, mount_setattr or openat2: before Linux 5.12),
   * `"engine"` (the fallback); undefined when it can.
   */
  readonly readOnlyViewUnavailable: "privilege" | "kernel" | "engine" | undefined;
  /**
   * The view takes a user namespace here (a host without CAP_SYS_ADMIN): it is
   * then not made for a child that changes its uid, gid or groups.
   */
  readonly readOnlyViewUserNamespace: boolean;
  /** The parts a default sandbox (no network) cannot enforce here. */
  readonly missing: readonly SandboxPart[];
}

/** Programs live here on Linux distributions; only those that exist are used. */
const SYSTEM_PROGRAM_DIRS = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/opt",
];

const KEYS = new Set([
  "writable",
  "readable",
  "executable",
  "executeWritable",
  "network",
  "allowWeaker",
  "keepCapabilities",
  "readOnlyView",
]);

function fail(api: string, message: string): never {
  throw new TypeError(`${api}: options.sandbox${message}`);
}

function pathList(api: string, value: unknown, field: string): string[] {
  if (!Array.isArray(value)) fail(api, `.${field} must be an array of paths`);
  return ownItems(value).map((path, i) => {
    if (typeof path !== "string" || path.length === 0 || path.includes("\0")) {
      fail(api, `.${field}[${i}] must be a non-empty path without NUL`);
    }
    return resolve(path);
  });
}

function flag(api: string, value: unknown, field: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") fail(api, `.${field} must be a boolean`);
  return value;
}

/** Validates the option's shape; throws TypeError naming the field. Pure. */
export function normalizeSandbox(api: string, value: unknown): NormalizedSandbox | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    fail(api, " must be an object");
  }
  // Own properties only, each read once (see ownProperties).
  for (const key of Object.keys(value)) {
    if (!KEYS.has(key)) fail(api, ` has an unknown field: ${key}`);
  }
  const o = ownProperties(value as Record<string, unknown>);
  const readable = o["readable"] === undefined || o["readable"] === "all" ? "all" : o["readable"];
  const weakerList = o["allowWeaker"] ?? [];
  if (!Array.isArray(weakerList)) fail(api, ".allowWeaker must be an array");
  const weaker = ownItems(weakerList);
  for (const part of weaker) {
    if (!(SANDBOX_PARTS as readonly unknown[]).includes(part)) {
      fail(api, `.allowWeaker has an unknown part (one of ${SANDBOX_PARTS.join(", ")})`);
    }
  }
  return {
    writable: pathList(api, o["writable"], "writable"),
    readable: readable === "all" ? "all" : pathList(api, readable, "readable"),
    executable:
      o["executable"] === undefined ? undefined : pathList(api, o["executable"], "executable"),
    executeWritable: flag(api, o["executeWritable"], "executeWritable"),
    network: flag(api, o["network"], "network"),
    allowWeaker: new Set(weaker as SandboxPart[]),
    keepCapabilities: flag(api, o["keepCapabilities"], "keepCapabilities"),
    readOnlyView: o["readOnlyView"] === undefined || flag(api, o["readOnlyView"], "readOnlyView"),
  };
}

/** What a kernel reporting `raw` (undefined: no addon) can enforce. Pure. */
export function supportFrom(
  raw:
    | {
        landlockAbi: number;
        seccompFilter: boolean;
        readOnlyView?: "available" | "user-namespace" | "kernel" | "privilege";
      }
    | undefined,
): SandboxSupport {
  const landlockAbi = raw?.landlockAbi ?? 0;
  const seccompFilter = raw?.seccompFilter ?? false;
  const missing: SandboxPart[] = [];
  if (landlockAbi < 1) missing.push("filesystem");
  else {
    if (landlockAbi < 3) missing.push("truncate");
    if (landlockAbi < 5) missing.push("ioctl");
  }
  if (!seccompFilter) missing.push("network", "syscalls");
  // An addon older than the view reports no field: it cannot make one.
  const view = raw === undefined ? "engine" : (raw.readOnlyView ?? "kernel");
  return {
    native: raw !== undefined,
    landlockAbi,
    seccompFilter,
    readOnlyView: view === "available" || view === "user-namespace",
    readOnlyViewUnavailable: view === "available" || view === "user-namespace" ? undefined : view,
    readOnlyViewUserNamespace: view === "user-namespace",
    missing,
  };
}

let probed: SandboxSupport | undefined;
let probedFor: unknown;

/** What this machine can enforce (probed once per addon instance). Total. */
export function sandboxSupport(): SandboxSupport {
  const binding = nativeBinding();
  if (probed === undefined || probedFor !== binding) {
    const usable = binding !== null && typeof binding.spawn === "function";
    probed = supportFrom(usable ? binding.sandboxSupport?.() : undefined);
    probedFor = binding;
  }
  return probed;
}

let programDirs: readonly string[] | undefined;

/**
 * The system's program directories that exist, resolved once per process:
 * the default `executable` list is read on every sandboxed spawn, and these
 * directories do not come and go while a host runs.
 */
function existingProgramDirs(): readonly string[] {
  programDirs ??= findProgramDirs();
  return programDirs;
}

function findProgramDirs(): readonly string[] {
  const dirs = new Set<string>();
  for (const dir of SYSTEM_PROGRAM_DIRS) {
    try {
      if (statSync(dir).isDirectory()) dirs.add(realpathSync.native(dir));
    } catch {
      // not on this system
    }
  }
  return Object.freeze([...dirs]);
}

/**
 * The addon's sandbox for a spawn: resolves every path (a missing one throws
 * its system error naming the field; a symbolic link inside a writable
 * directory is refused, see sandbox-paths.ts), refuses overlapping writable and executable directories
 * unless `executeWritable`, and refuses (SandboxError) any part this machine
 * cannot enforce that the host did not accept as weaker. `changesCredentials`:
 * the spawn sets uid, gid or groups, which a view made in a user namespace
 * cannot combine with (the view is then not made).
 */
export function resolveSandbox(
  sandbox: NormalizedSandbox,
  support: SandboxSupport = sandboxSupport(),
  changesCredentials = false,
): RawSandbox {
  if (!support.native) {
    throw new SandboxError(
      "ERR_EXACTSPAWN_SANDBOX_UNAVAILABLE",
      "sandbox: the native engine is not in use; the child_process fallback cannot confine a child",
      ["filesystem", "network", "syscalls"],
    );
  }
  const missing = support.missing.filter((part) => part !== "network" || !sandbox.network);
  const refused = missing.filter((part) => !sandbox.allowWeaker.has(part));
  if (refused.length > 0) {
    throw new SandboxError(
      "ERR_EXACTSPAWN_SANDBOX_UNAVAILABLE",
      `sandbox: this kernel cannot enforce ${refused.join(", ")} (Landlock ABI ${support.landlockAbi}, ` +
        `seccomp ${support.seccompFilter ? "available" : "unavailable"}); accept it with allowWeaker`,
      refused,
    );
  }
  const paths = resolveSandboxPaths({
    writable: sandbox.writable,
    readable: sandbox.readable === "all" ? undefined : sandbox.readable,
    executable: sandbox.executable,
  });
  const write = paths.write;
  const exec = paths.exec ?? existingProgramDirs();
  if (!sandbox.executeWritable) {
    for (const w of write) {
      const overlap = exec.find((x) => beneath(w, x) || beneath(x, w));
      if (overlap !== undefined) {
        throw new SandboxError(
          "ERR_EXACTSPAWN_SANDBOX_CONFLICT",
          `sandbox: writable ${w} overlaps executable ${overlap}, so written files could be run; ` +
            "set executeWritable: true or narrow one of them",
        );
      }
    }
  }
  const view = viewPaths(write);
  return {
    readAll: sandbox.readable === "all",
    read: paths.read ?? [],
    write,
    exec,
    execWritable: sandbox.executeWritable,
    network: sandbox.network,
    landlock: support.landlockAbi >= 1,
    seccomp: support.seccompFilter,
    dropCapabilities: !sandbox.keepCapabilities,
    readOnlyView:
      view !== undefined &&
      sandbox.readOnlyView &&
      support.readOnlyView &&
      !(support.readOnlyViewUserNamespace && changesCredentials),
    viewPaths: view ?? [],
    userNamespace: support.readOnlyViewUserNamespace,
  };
}
