/**
 * What containment this host can give a step, and what one step gets
 * (contain.ts has the option). The mechanism is cgroup v2 (native/core/
 * cgroup.h): where the host may create a cgroup under the parent — root, a
 * delegated systemd scope or user slice, a container with a cgroup namespace
 * of its own — each step gets a fresh cgroup there. Where it may not, a
 * required containment is refused with a ContainmentError that names what is
 * missing and how to get it; "best-effort" runs the step uncontained and
 * reports `contained: null`.
 *
 * The host's answer is probed once per parent and kept (a parent does not
 * become writable or lose a controller under a running host often enough
 * to pay for a probe per step).
 */
import { accessSync, constants, readFileSync } from "node:fs";
import { type NativeBinding, nativeBinding, type RawContain } from "../native.js";
import { type ContainedReport, ContainmentError, type NormalizedContain } from "./contain.js";

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

function probeParent(parent: string, mount: string): CgroupSupport {
  if (parent !== mount && !parent.startsWith(`${mount}/`)) {
    return unavailable(parent, "cgroup2", `${parent} is not inside the cgroup2 mount ${mount}`);
  }
  try {
    accessSync(parent, constants.W_OK);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "EACCES";
    return unavailable(
      parent,
      "writable cgroup",
      `this host cannot create a cgroup under ${parent} (${code}): ${DELEGATE}`,
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
  const support = native
    ? cgroupSupport(contain.cgroupParent, binding)
    : unavailable(
        null,
        "native engine",
        "containment needs the native engine; this step runs on the child_process fallback",
      );
  if (!support.available || support.parent === null) {
    if (!contain.required) return NONE;
    throw new ContainmentError(
      "ERR_EXACTSPAWN_CONTAINMENT_UNAVAILABLE",
      `contain: ${support.reason}`,
      support.missing,
    );
  }
  const missing = contain.limits
    .map(([controller]) => controller)
    .filter((controller) => !support.controllers.includes(controller));
  if (missing.length > 0 && contain.required) {
    throw new ContainmentError(
      "ERR_EXACTSPAWN_CONTAINMENT_CONTROLLER",
      `contain: the ${missing.join(", ")} controller${missing.length > 1 ? "s are" : " is"} not delegated to ${support.parent} (its cgroup.subtree_control lists ${support.controllers.length > 0 ? support.controllers.join(" ") : "none"}): enable ${missing.map((c) => `+${c}`).join(" ")} there (systemd: Delegate=yes), or drop the limit`,
      missing.map((controller) => `controller ${controller}`),
    );
  }
  const limits = contain.limits.filter(([controller]) => support.controllers.includes(controller));
  const asked: Record<string, number> = {};
  for (const [key, value] of Object.entries(contain.asked)) {
    const controller = key === "memoryMax" ? "memory" : key === "pidsMax" ? "pids" : "cpu";
    if (value !== undefined && support.controllers.includes(controller)) asked[key] = value;
  }
  return {
    raw: limits.length > 0 ? { parent: support.parent, limits } : { parent: support.parent },
    report: Object.freeze({
      mechanism: "cgroup",
      cgroupParent: support.parent,
      limits: Object.freeze(asked),
    }),
  };
}
