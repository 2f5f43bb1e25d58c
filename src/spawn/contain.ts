/**
 * The `contain` option: every process a step starts — `setsid` daemons,
 * double forks and `nohup` jobs included — is killed when the step ends
 * (its leader exits, it times out, is aborted or killed, or the host dies),
 * and only then does the step settle (docs/containment.md). Validation, the
 * limits' files, the report and the error; what this host can do and what a
 * step gets is decided in contain-plan.ts.
 */
import { knownKeys, ownOptions } from "../known-options.js";

/** How a step is contained (docs/containment.md). */
export type ContainMechanism = "cgroup" | "pid-namespace";

/** Containment with limits over the whole tree (each needs its controller delegated). */
export interface ContainSettings {
  /**
   * `"cgroup"`: a cgroup of the step's own; `"pid-namespace"`: a PID
   * namespace of its own, under the addon's init as PID 1. Default: a cgroup
   * where this host can make one, else the PID namespace (limits and
   * `cgroupParent` need the cgroup).
   */
  mechanism?: ContainMechanism;
  /**
   * The cgroup directory (absolute, inside the cgroup2 mount) under which the
   * host makes its sub-tree of step cgroups. Default: the host's own cgroup.
   */
  cgroupParent?: string;
  /** memory.max of the tree, in bytes (the memory controller). */
  memoryMax?: number;
  /** pids.max of the tree: processes and threads at once (the pids controller). */
  pidsMax?: number;
  /** cpu.max of the tree, in CPUs (0.5: half of one CPU; the cpu controller). */
  cpuMax?: number;
}

/**
 * `true` or settings: contain or refuse the step with a ContainmentError.
 * `"best-effort"`: contain where this host can, else run uncontained (the
 * result's `contained` says which). `false`: not contained.
 */
export type ContainOption = boolean | "best-effort" | ContainSettings;

/** What a step asked for, validated. Limits are [controller, file, value] as the cgroup takes them. */
export interface NormalizedContain {
  readonly required: boolean;
  /** undefined: the cgroup where this host can, else the PID namespace. */
  readonly mechanism: ContainMechanism | undefined;
  readonly cgroupParent: string | undefined;
  readonly limits: ReadonlyArray<readonly [string, string, string]>;
  /** The limits as asked, for the report. */
  readonly asked: Readonly<Pick<ContainSettings, LimitKey>>;
}

/** What was applied to a step: its `contained` field (null: nothing). */
export type ContainedReport = CgroupContainedReport | PidNamespaceContainedReport;

/** The step ran in a PID namespace of its own under the addon's init. */
export interface PidNamespaceContainedReport {
  readonly mechanism: "pid-namespace";
  /** Whether a user namespace was made with it (a host without CAP_SYS_ADMIN). */
  readonly userNamespace: boolean;
  /** A PID namespace has no limits, so nothing to count: always null. */
  readonly limitEvents: null;
}

/**
 * What the kernel counted against the step's limits, read from its cgroup
 * when it ended (docs/containment.md#what-a-limit-did); each null where its
 * controller is not enabled for the step.
 */
export interface LimitEvents {
  /** pids.events `max`: forks and clones refused at pids.max. */
  readonly pidsMax: number | null;
  /** memory.events `max`: times the tree's usage met memory.max (reclaim, not yet a failure). */
  readonly memoryMax: number | null;
  /** memory.events `oom`: times the OOM killer was invoked for the tree. */
  readonly oom: number | null;
  /** memory.events `oom_kill`: processes of the tree the OOM killer ended. */
  readonly oomKill: number | null;
  /** cpu.stat `throttled_usec`: time the tree waited, held back by cpu.max. */
  readonly cpuThrottledMicros: number | null;
  /** cpu.stat `nr_throttled`: periods in which cpu.max held the tree back. */
  readonly cpuThrottledPeriods: number | null;
}

/** The step ran in a cgroup of its own. */
export interface CgroupContainedReport {
  readonly mechanism: "cgroup";
  /** The parent the step's cgroup was made under. */
  readonly cgroupParent: string;
  /** The limits written into the step's cgroup. */
  readonly limits: Readonly<Pick<ContainSettings, LimitKey>>;
  /** What the kernel counted against the limits (null: the step never ran, e.g. a start failure). */
  readonly limitEvents: LimitEvents | null;
}

/** The limit settings. */
export type LimitKey = "memoryMax" | "pidsMax" | "cpuMax";

/**
 * Each limit's controller and file: the one place that says which (the plan
 * keeps a limit only where its controller is delegated).
 */
export const LIMIT_FILES: Readonly<
  Record<LimitKey, { readonly controller: string; readonly file: string }>
> = Object.freeze({
  memoryMax: { controller: "memory", file: "memory.max" },
  pidsMax: { controller: "pids", file: "pids.max" },
  cpuMax: { controller: "cpu", file: "cpu.max" },
});

/**
 * Every controller a step's cgroup may use (its limits, the memory peak, the
 * limit events): the addon enables each, where the parent delegates it, once
 * in the host's sub-tree, so every step reports the same whatever earlier
 * steps asked. Derived from LIMIT_FILES: a limit on a new controller is
 * enabled with it.
 */
export const CONTROLLERS: readonly string[] = Object.freeze([
  ...new Set(Object.values(LIMIT_FILES).map(({ controller }) => controller)),
]);

const SETTINGS_KEYS = knownKeys<ContainSettings>({
  mechanism: true,
  cgroupParent: true,
  memoryMax: true,
  pidsMax: true,
  cpuMax: true,
});

/** cpu.max's period: quota and period in microseconds (the kernel's default period). */
const CPU_PERIOD = 100_000;

/** A limit as its cgroup file takes it. */
function limitValue(key: LimitKey, value: number): string {
  if (key !== "cpuMax") return String(value);
  // Quota and period in microseconds; the kernel's floor for a quota is 1 ms.
  const quota = Math.max(1000, Math.round(value * CPU_PERIOD));
  return `${quota} ${CPU_PERIOD}`;
}

function integer(value: unknown, where: string, min: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`${where} must be an integer >= ${min}`);
  }
  return value;
}

/**
 * Validates `contain` as `api` received it: undefined when off. Throws
 * TypeError naming the field for a wrong type or an unknown key. Pure.
 */
export function normalizeContain(api: string, value: unknown): NormalizedContain | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) {
    return { required: true, mechanism: undefined, cgroupParent: undefined, limits: [], asked: {} };
  }
  if (value === "best-effort") {
    return {
      required: false,
      mechanism: undefined,
      cgroupParent: undefined,
      limits: [],
      asked: {},
    };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(
      `${api}: options.contain must be true, false, "best-effort" or an object of settings`,
    );
  }
  const s = ownOptions(value as ContainSettings, SETTINGS_KEYS, `${api}: options.contain`);
  const where = `${api}: options.contain`;
  if (
    s.cgroupParent !== undefined &&
    (typeof s.cgroupParent !== "string" ||
      !s.cgroupParent.startsWith("/") ||
      /[\0\n]/.test(s.cgroupParent))
  ) {
    throw new TypeError(`${where}.cgroupParent must be an absolute path without NUL or newline`);
  }
  const asked: Partial<Record<LimitKey, number>> = {};
  if (s.memoryMax !== undefined) asked.memoryMax = integer(s.memoryMax, `${where}.memoryMax`, 0);
  if (s.pidsMax !== undefined) asked.pidsMax = integer(s.pidsMax, `${where}.pidsMax`, 1);
  if (s.cpuMax !== undefined) {
    if (typeof s.cpuMax !== "number" || !Number.isFinite(s.cpuMax) || !(s.cpuMax > 0)) {
      throw new TypeError(`${where}.cpuMax must be a number of CPUs > 0`);
    }
    asked.cpuMax = s.cpuMax;
  }
  const limits = (Object.keys(asked) as LimitKey[]).map((key) => {
    const { controller, file } = LIMIT_FILES[key];
    return [controller, file, limitValue(key, asked[key] as number)] as const;
  });
  if (s.mechanism !== undefined && s.mechanism !== "cgroup" && s.mechanism !== "pid-namespace") {
    throw new TypeError(`${where}.mechanism must be "cgroup" or "pid-namespace"`);
  }
  if (s.mechanism === "pid-namespace" && (limits.length > 0 || s.cgroupParent !== undefined)) {
    throw new TypeError(
      `${where}: memoryMax, pidsMax, cpuMax and cgroupParent need mechanism "cgroup" (a PID namespace has no limits)`,
    );
  }
  return { required: true, mechanism: s.mechanism, cgroupParent: s.cgroupParent, limits, asked };
}

/**
 * A step's `contained` as its result and error give it: the plan's report,
 * with what the kernel counted against the limits of a cgroup-contained step
 * that ran (the engine's `limitEvents`).
 */
export function containedReport(
  report: ContainedReport | null | undefined,
  limitEvents: LimitEvents | undefined,
): ContainedReport | null {
  if (report == null) return null;
  if (report.mechanism !== "cgroup" || limitEvents === undefined) return report;
  return Object.freeze({ ...report, limitEvents });
}

/** Containment was asked and this host cannot apply it as asked; nothing was started. */
export class ContainmentError extends Error {
  override readonly name = "ContainmentError";
  readonly code: "ERR_EXACTSPAWN_CONTAINMENT_UNAVAILABLE" | "ERR_EXACTSPAWN_CONTAINMENT_CONTROLLER";
  /** What is missing: "native engine", "cgroup2", "writable cgroup", "controller memory", … */
  readonly missing: readonly string[];
  constructor(code: ContainmentError["code"], message: string, missing: readonly string[]) {
    super(message);
    this.code = code;
    this.missing = missing;
  }
}
