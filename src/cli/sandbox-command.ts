/** `exactspawn sandbox [--json]`: what this machine can enforce for the `sandbox` option. */
import { type HelperStatus, helperUnavailable, nativeBinding, nativeStatus } from "../native.js";
import {
  type CgroupSupport,
  cgroupSupport,
  type PidNamespaceSupport,
  pidNamespaceSupport,
} from "../spawn/contain-plan.js";
import { type SandboxPart, type SandboxSupport, sandboxSupport } from "../spawn/sandbox.js";
import { parseCommandLine } from "./command-line.js";
import { colorEnabled, paint, table } from "./format.js";
import { UsageError } from "./usage-error.js";

export const SANDBOX_HELP = `Usage: exactspawn sandbox [--json]

Prints what the kernel here can enforce for spawn's \`sandbox\` option:
  engine        the native engine is required (the fallback refuses any sandbox)
  Landlock      the ABI version: 1 file system, 2 cross-directory links and
                renames, 3 truncate, 4 TCP bind/connect, 5 device ioctl,
                6 signal and abstract-socket scoping
  seccomp       whether the system-call filter can be installed
  read-only view  whether children get a private mount view, read-only
                outside writable (needs root and Linux 5.12), or why not
  missing       parts a sandbox is refused for unless the host accepts them
                with allowWeaker (exit status 1 when any is missing)
  contained     whether steps can be contained (the \`contain\` option: a cgroup
                v2 of their own under the host's cgroup), the controllers limits
                can use, or why not (docs/containment.md; not in the exit status)
  PID namespace whether steps can be contained in a PID namespace of their own
                instead (with a user namespace on a host that is not root), or
                why not; the default where no cgroup can be made
  exec helper   where the program that starts sandboxed, uid and PID-namespace
                steps runs from (its file, or a copy in memory), or why it
                cannot run (exit status 1 then)

Options:
  --json   one JSON object (schema: exactspawn.sandbox/v1)
  -h, --help`;

const PARTS: Record<SandboxPart, string> = {
  filesystem: "writes and reads confined to the listed directories (Landlock)",
  truncate: "truncating files outside the writable directories refused (Landlock ABI 3)",
  ioctl: "ioctl on devices opened inside the sandbox refused (Landlock ABI 5)",
  network: "sockets other than AF_UNIX refused (seccomp)",
  syscalls:
    "terminal injection, keyrings, setuid bits (chmod or at creation), other processes' limits, owner and xattr changes, io_uring, executable memfds refused (seccomp)",
};

const VIEW_UNAVAILABLE: Record<NonNullable<SandboxSupport["readOnlyViewUnavailable"]>, string> = {
  privilege: "no: the host lacks CAP_SYS_ADMIN (not root)",
  kernel: "no: the kernel lacks open_tree, move_mount, openat2 or mount_setattr (Linux 5.12)",
  engine: "not probed (needs the native engine)",
};

/** The stable machine-readable shape printed by --json. */
export function sandboxJson(
  support: SandboxSupport,
  cgroup: CgroupSupport = cgroupSupport(),
  pid: PidNamespaceSupport = pidNamespaceSupport(),
  helper: HelperReport | null = helperReport(),
): Record<string, unknown> {
  return {
    schema: "exactspawn.sandbox/v1",
    native: support.native,
    landlockAbi: support.landlockAbi,
    landlockTcp: support.landlockAbi >= 4,
    landlockScopes: support.landlockAbi >= 6,
    seccompFilter: support.seccompFilter,
    readOnlyView: support.readOnlyView,
    readOnlyViewUnavailable: support.readOnlyViewUnavailable ?? null,
    readOnlyViewUserNamespace: support.readOnlyViewUserNamespace,
    missing: support.missing,
    containment: {
      mechanism: cgroup.available ? "cgroup" : pid.available ? "pid-namespace" : null,
      cgroupParent: cgroup.parent,
      controllers: cgroup.controllers,
      reason: cgroup.reason,
      pidNamespace: {
        available: pid.available,
        userNamespace: pid.userNamespace,
        reason: pid.reason,
      },
    },
    helper,
  };
}

/** The exec helper as the command reports it. */
export interface HelperReport {
  readonly run: HelperStatus["run"];
  readonly path: string;
  /** Why it cannot run (its error and reason), null when it runs. */
  readonly reason: string | null;
}

/** The exec helper's state here, or null without the native engine. */
export function helperReport(binding = nativeBinding()): HelperReport | null {
  const status = binding?.helperStatus?.();
  if (status === undefined) return null;
  return { run: status.run, path: status.path, reason: helperUnavailable(binding) ?? null };
}

const HELPER_RUNS: Record<HelperStatus["run"], string> = {
  file: "runs from its file",
  memory: "runs from a copy in memory (its file cannot be exec'd there)",
  unavailable: "cannot run",
  unset: "not set",
};

/** Whether a native engine's steps that need the helper can start. */
function helperFails(helper: HelperReport | null): boolean {
  return helper !== null && (helper.run === "unavailable" || helper.run === "unset");
}

export function runSandbox(argv: string[]): number {
  const { values, positionals } = parseCommandLine("sandbox", argv, {
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (positionals.length > 0) throw new UsageError("sandbox takes no arguments");
  if (values.help) {
    process.stdout.write(`${SANDBOX_HELP}\n`);
    return 0;
  }
  const support = sandboxSupport();
  const helper = helperReport();
  const ok = support.missing.length === 0 && support.native && !helperFails(helper);
  if (values.json) {
    const json = sandboxJson(support, cgroupSupport(), pidNamespaceSupport(), helper);
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    return ok ? 0 : 1;
  }
  const color = colorEnabled(process.stdout);
  const yes = (ok: boolean, text: string) => paint(ok ? "green" : "yellow", text, color);
  const rows: Array<[string, string]> = [
    [
      "engine",
      support.native
        ? yes(true, "native")
        : yes(false, `fallback: ${nativeStatus().reason ?? "addon not loaded"}`),
    ],
    [
      "Landlock",
      support.landlockAbi > 0
        ? yes(true, `ABI ${support.landlockAbi}`)
        : yes(false, support.native ? "unavailable" : "not probed (needs the native engine)"),
    ],
    [
      "seccomp filter",
      support.seccompFilter
        ? yes(true, "yes")
        : yes(false, support.native ? "no" : "not probed (needs the native engine)"),
    ],
    [
      "read-only view",
      support.readOnlyView
        ? yes(true, support.readOnlyViewUserNamespace ? "yes (in a user namespace)" : "yes")
        : yes(false, VIEW_UNAVAILABLE[support.readOnlyViewUnavailable ?? "engine"]),
    ],
  ];
  for (const part of support.missing) rows.push([`missing ${part}`, PARTS[part]]);
  if (support.missing.length === 0) rows.push(["enforced", Object.keys(PARTS).join(", ")]);
  const cgroup = cgroupSupport();
  const controllers = cgroup.controllers.length > 0 ? cgroup.controllers.join(" ") : "none";
  rows.push([
    "contained",
    cgroup.available
      ? yes(true, `cgroup under ${cgroup.parent} (controllers for limits: ${controllers})`)
      : yes(false, `no cgroup: ${cgroup.reason}`),
  ]);
  const pid = pidNamespaceSupport();
  rows.push([
    "PID namespace",
    pid.available
      ? yes(true, pid.userNamespace ? "yes (with a user namespace)" : "yes")
      : yes(false, `no: ${pid.reason}`),
  ]);
  if (helper !== null) {
    rows.push([
      "exec helper",
      helperFails(helper)
        ? yes(false, `${HELPER_RUNS[helper.run]}: ${helper.reason ?? helper.path}`)
        : yes(true, HELPER_RUNS[helper.run]),
    ]);
  }
  process.stdout.write(`${table(rows)}\n`);
  return ok ? 0 : 1;
}
