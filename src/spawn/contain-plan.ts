/**
 * What containment this host can give a step, and what one step gets
 * (contain.ts has the option). Two mechanisms:
 * - cgroup v2 (native/core/cgroup.h): where the host may create a cgroup
 *   under the parent — root, a delegated systemd scope or user slice, a
 *   container with a cgroup namespace of its own — each step gets a fresh
 *   cgroup there;
 * - a PID namespace (native/helper/init.h): the step runs under the exec
 *   helper as PID 1 of a namespace of its own, whose end kills everything in
 *   it (with a user namespace too where the host lacks CAP_SYS_ADMIN).
 * The default takes the cgroup where it can, else the namespace (not when
 * limits are asked: only a cgroup has them). Where neither applies, a
 * required containment is refused with a ContainmentError that names what is
 * missing and how to get it; "best-effort" runs the step uncontained and
 * reports `contained: null`.
 *
 * The host's answer is probed once (per parent for a cgroup) and kept (a
 * parent does not become writable or lose a controller under a running host
 * often enough to pay for a probe per step).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { logger } from "../log.js";
import {
  helperUnavailable,
  type NativeBinding,
  nativeBinding,
  type RawContain,
} from "../native.js";
import {
  CONTROLLERS,
  type ContainedReport,
  ContainmentError,
  LIMIT_FILES,
  type LimitKey,
  type NormalizedContain,
} from "./contain.js";

/** What this host can do for a parent: a cgroup, or why not. */
export interface CgroupSupport {
  /** The parent step cgroups would be made under (null: no cgroup v2 path at all). */
  readonly parent: string | null;
  /** Whether a step cgroup can be made there. */
  readonly available: boolean;
  /** Why not, in the user's words with the remedy (null when available). */
  readonly reason: string | null;
  /** What is missing, as ContainmentError.missing names it. */
  readonly missing: readonly string[];
  /** Controllers delegated to the parent's children (cgroup.subtree_control): limits need them. */
  readonly controllers: readonly string[];
}

const DELEGATE =
  "run the host as root, in a systemd scope or service with Delegate=yes " +
  "(systemd-run --user --scope -p Delegate=yes …), or in a container with a cgroup namespace " +
  "of its own, or name a writable cgroupParent";

const cache = new Map<string, CgroupSupport>();

function unavailable(parent: string | null, missing: string, reason: string): CgroupSupport {
  return { parent, available: false, reason, missing: [missing], controllers: [] };
}

function errorCode(error: unknown): string {
  return (error as { code?: string }).code ?? "EIO";
}

function probeParent(parent: string, mount: string): CgroupSupport {
  if (parent !== mount && !parent.startsWith(`${mount}/`)) {
    return unavailable(parent, "cgroup2", `${parent} is not inside the cgroup2 mount ${mount}`);
  }
  // Probed by doing what a step will do: make a cgroup there (and remove it).
  // Asking access(2) instead answers for the directory's mode bits (0555 on
  // cgroupfs) where the runtime does not defer to the kernel (Deno says
  // EACCES to root), and not for what cgroupfs itself allows.
  const probe = `${parent}/exactspawn-probe-${process.pid}-${randomBytes(8).toString("hex")}`;
  try {
    mkdirSync(probe);
  } catch (error) {
    return unavailable(
      parent,
      "writable cgroup",
      `this host cannot create a cgroup under ${parent} (${errorCode(error)}): ${DELEGATE}`,
    );
  }
  // Made: steps can be contained here whatever the removal says. An empty
  // cgroup nobody joined is removable; if it is not, say what stays behind.
  try {
    rmdirSync(probe);
  } catch (error) {
    logger().warn(
      { event: "contain.probe", path: probe, code: errorCode(error) },
      "exactspawn: the cgroup made to probe this parent could not be removed",
    );
  }
  let controllers: string[] = [];
  try {
    controllers = readFileSync(`${parent}/cgroup.subtree_control`, "utf8")
      .split(/\s+/)
      .filter(Boolean);
  } catch {
    // Unreadable: no controller can be counted on.
  }
  return { parent, available: true, reason: null, missing: [], controllers };
}

/**
 * What this host can do under `cgroupParent` (default: the host's own
 * cgroup). Never throws; reads /proc and the cgroup2 mount once per parent.
 */
export function cgroupSupport(
  cgroupParent?: string,
  binding: NativeBinding | null = nativeBinding(),
): CgroupSupport {
  const key = cgroupParent ?? "";
  const known = cache.get(key);
  if (known !== undefined) return known;
  let support: CgroupSupport;
  if (binding === null || typeof binding.probeContainment !== "function") {
    support = unavailable(
      null,
      "native engine",
      "containment needs the native addon, which is not loaded (the child_process fallback cannot place a child in a cgroup before it runs)",
    );
  } else {
    const probe = binding.probeContainment();
    support =
      "errno" in probe
        ? unavailable(
            null,
            "cgroup2",
            `this host has no cgroup v2 hierarchy of its own (${probe.code}: no cgroup2 mount in /proc/self/mountinfo, or no "0::" line in /proc/self/cgroup): mount cgroup2, or boot with systemd.unified_cgroup_hierarchy=1`,
          )
        : probeParent(cgroupParent ?? probe.own, probe.mount);
  }
  cache.set(key, support);
  return support;
}

/** Forgets what was probed (tests that change the host's cgroups). */
export function forgetCgroupSupport(): void {
  cache.clear();
  pidCache.clear();
}

/** Whether this host can run a step in a PID namespace of its own, and how. */
export interface PidNamespaceSupport {
  readonly available: boolean;
  /**
   * Whether a user namespace is made with it (the host lacks CAP_SYS_ADMIN:
   * unprivileged user namespaces must be allowed).
   */
  readonly userNamespace: boolean;
  /** Why not, in the user's words with the remedy (null when available). */
  readonly reason: string | null;
  /** What is missing, as ContainmentError.missing names it. */
  readonly missing: readonly string[];
}

const USERNS =
  "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 where the kernel has it, " +
  "user.max_user_namespaces above 0, and no security module refusing them), or run the host with CAP_SYS_ADMIN";

const pidCache = new Map<NativeBinding | null, PidNamespaceSupport>();

/**
 * Whether and how this host can run a contained step in a PID namespace
 * (tried once with the exec helper, then kept). Never throws.
 */
export function pidNamespaceSupport(
  binding: NativeBinding | null = nativeBinding(),
): PidNamespaceSupport {
  const known = pidCache.get(binding);
  if (known !== undefined) return known;
  let support: PidNamespaceSupport;
  if (binding === null || typeof binding.probePidNamespace !== "function") {
    support = {
      available: false,
      userNamespace: false,
      reason:
        "a PID namespace needs the native addon and its exec helper, which are not loaded (the child_process fallback cannot start a child in one)",
      missing: ["native engine"],
    };
  } else if (binding.helperStatus?.().run === "unavailable") {
    // The probe runs the helper: its failure is the helper's, not the kernel's.
    support = {
      available: false,
      userNamespace: false,
      reason: `a PID namespace's init is the exec helper, which cannot run: ${helperUnavailable(binding) ?? "unavailable"}`,
      missing: ["exec helper"],
    };
  } else {
    const probe = binding.probePidNamespace();
    const path = binding.helperStatus?.().path;
    support = probe.works
      ? { available: true, userNamespace: probe.userNamespace, reason: null, missing: [] }
      : probe.step === "helper"
        ? {
            // The helper's exec failed (every way of exec'ing it): the
            // helper's failure, not the kernel's PID namespaces' (worded as
            // the unavailable helper's above).
            available: false,
            userNamespace: probe.userNamespace,
            reason: `a PID namespace's init is the exec helper, which cannot run: ${probe.syscall ?? "execveat"} ${probe.code ?? "EPERM"}${path ? ` ${path}` : ""}`,
            missing: ["exec helper"],
          }
        : {
            available: false,
            userNamespace: probe.userNamespace,
            reason: probe.userNamespace
              ? `this host cannot make a user namespace with a PID namespace (${probe.code ?? "EPERM"}): ${USERNS}`
              : `this host cannot make a PID namespace (${probe.code ?? "EPERM"}): a kernel with PID namespaces (CONFIG_PID_NS) and no policy refusing them`,
            missing: [probe.userNamespace ? "user namespace" : "pid namespace"],
          };
  }
  pidCache.set(binding, Object.freeze(support));
  return support;
}

/** What one step gets: the addon's `contain` and the report, or nothing. */
export interface ContainmentPlan {
  readonly raw: RawContain | undefined;
  readonly report: ContainedReport | null;
}

const NONE: ContainmentPlan = Object.freeze({ raw: undefined, report: null });

/**
 * The containment of one step. Throws ContainmentError when it is required
 * and this host (or engine) cannot apply it as asked, limits included;
 * "best-effort" gets what can be applied (no limit whose controller is not
 * delegated). `native`: whether the step runs on the native engine.
 */
export function planContainment(
  contain: NormalizedContain | undefined,
  native: boolean,
  binding: NativeBinding | null = nativeBinding(),
): ContainmentPlan {
  if (contain === undefined) return NONE;
  if (!native) {
    return refuse(
      contain,
      "containment needs the native engine; this step runs on the child_process fallback",
      ["native engine"],
    );
  }
  if (contain.mechanism === "pid-namespace") return inPidNamespace(contain, binding, null);
  const support = cgroupSupport(contain.cgroupParent, binding);
  if (!support.available || support.parent === null) {
    // The default falls back to the namespace, unless a cgroup was named
    // (mechanism, parent or limits): only a cgroup gives those.
    const cgroupAsked =
      contain.mechanism === "cgroup" ||
      contain.cgroupParent !== undefined ||
      contain.limits.length > 0;
    if (!cgroupAsked) return inPidNamespace(contain, binding, support);
    return refuse(contain, support.reason ?? "no cgroup", support.missing);
  }
  return inCgroup(contain, support);
}

function refuse(
  contain: NormalizedContain,
  reason: string,
  missing: readonly string[],
): ContainmentPlan {
  if (!contain.required) return NONE;
  throw new ContainmentError(
    "ERR_EXACTSPAWN_CONTAINMENT_UNAVAILABLE",
    `contain: ${reason}`,
    missing,
  );
}

/** The PID namespace; `cgroup` is why no cgroup applied (the default's fallback), else null. */
function inPidNamespace(
  contain: NormalizedContain,
  binding: NativeBinding | null,
  cgroup: CgroupSupport | null,
): ContainmentPlan {
  const support = pidNamespaceSupport(binding);
  if (!support.available) {
    const reason =
      cgroup === null
        ? support.reason
        : `no cgroup (${cgroup.reason}); no PID namespace (${support.reason})`;
    return refuse(contain, reason ?? "no PID namespace", [
      ...(cgroup?.missing ?? []),
      ...support.missing,
    ]);
  }
  return {
    raw: { namespace: support.userNamespace ? "pid+user" : "pid" },
    report: Object.freeze({
      mechanism: "pid-namespace",
      userNamespace: support.userNamespace,
      limitEvents: null,
    }),
  };
}

function inCgroup(contain: NormalizedContain, support: CgroupSupport): ContainmentPlan {
  const parent = support.parent as string;
  const missing = contain.limits
    .map(([controller]) => controller)
    .filter((controller) => !support.controllers.includes(controller));
  if (missing.length > 0 && contain.required) {
    throw new ContainmentError(
      "ERR_EXACTSPAWN_CONTAINMENT_CONTROLLER",
      `contain: the ${missing.join(", ")} controller${missing.length > 1 ? "s are" : " is"} not delegated to ${parent} (its cgroup.subtree_control lists ${support.controllers.length > 0 ? support.controllers.join(" ") : "none"}): enable ${missing.map((c) => `+${c}`).join(" ")} there (systemd: Delegate=yes), or drop the limit`,
      missing.map((controller) => `controller ${controller}`),
    );
  }
  const limits = contain.limits.filter(([controller]) => support.controllers.includes(controller));
  const asked: Partial<Record<LimitKey, number>> = {};
  for (const key of Object.keys(contain.asked) as LimitKey[]) {
    const value = contain.asked[key];
    if (value !== undefined && support.controllers.includes(LIMIT_FILES[key].controller)) {
      asked[key] = value;
    }
  }
  return {
    // No prototype: the addon reads `namespace` first, and an inherited one
    // must not turn this cgroup into a PID namespace (nor `limits` be inherited).
    raw: Object.assign(
      Object.create(null) as RawContain,
      limits.length > 0
        ? { parent, controllers: CONTROLLERS, limits }
        : { parent, controllers: CONTROLLERS },
    ),
    report: Object.freeze({
      mechanism: "cgroup",
      cgroupParent: parent,
      limits: Object.freeze(asked),
      limitEvents: null,
    }),
  };
}
