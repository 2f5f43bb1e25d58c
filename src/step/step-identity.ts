/**
 * Who a step is, for the host reading its errors and its logs: the step's
 * name (`step`, the host's label) and a correlation id (the call's
 * `correlationId`, else the runtime's, else one generated per call).
 *
 * Every error a runtime.bash or runtime.spawn call rejects (or throws) with
 * carries both as own fields and names the step in its message; every log
 * event of the call goes through a child logger bound to both. A generated
 * id names the call in errors and logs only: it is not put in the child's
 * environment (only a given id is, as the correlation variable).
 *
 * Field names never collide with pino's own (`name`, `msg`, `level`,
 * `time`, `pid`, `hostname`): the child's pid is `childPid`, a variable's
 * name is `variable`. Events carry names, counts, sizes, codes — never a
 * value (docs/runtime.md, "Logging").
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { displayName, STEP_ERROR_BRAND } from "../errors.js";
import { hostLoggerSet, type Logger, logger as libraryLogger } from "../log.js";

export interface StepIdentity {
  /** The step's name as given (undefined: none). */
  readonly step: string | undefined;
  readonly correlationId: string;
}

/** The identity of one call: the given id, else the runtime's, else a fresh UUID. */
export function stepIdentity(
  step: unknown,
  correlationId: unknown,
  runtimeId: string | undefined,
): StepIdentity {
  return {
    step: typeof step === "string" ? step : undefined,
    correlationId: typeof correlationId === "string" ? correlationId : (runtimeId ?? randomUUID()),
  };
}

/**
 * Puts the step's identity on an error (own enumerable `step` and
 * `correlationId`) and, for a named step, `step "NAME": ` in front of the
 * message (and the stack's first line), and brands it for isStepError. Idempotent; non-objects are
 * returned as they are.
 */
export function tagStepError<E>(error: E, identity: StepIdentity): E {
  if (error === null || typeof error !== "object") return error;
  const target = error as { step?: unknown; correlationId?: unknown; message?: unknown };
  if (Object.hasOwn(target, "correlationId")) return error;
  try {
    Object.defineProperty(target, "step", { value: identity.step, enumerable: true });
    Object.defineProperty(target, "correlationId", {
      value: identity.correlationId,
      enumerable: true,
    });
    // Non-enumerable: a logger serialising the error does not print it.
    Object.defineProperty(target, STEP_ERROR_BRAND, { value: true });
    // The message names a named step; the correlation id stays a field (it
    // may be a value the host put in the environment, the correlation variable).
    if (error instanceof Error && identity.step !== undefined) {
      const before = error.message;
      // Read first: V8 formats a stack on its first read, from the message
      // of that moment, so reading it after the change would repeat the prefix.
      const stack = error.stack;
      const message = `step "${displayName(identity.step)}": ${before}`;
      Object.defineProperty(error, "message", {
        value: message,
        writable: true,
        configurable: true,
      });
      if (typeof stack === "string" && stack.includes(before)) {
        Object.defineProperty(error, "stack", {
          value: stack.replace(before, message),
          writable: true,
          configurable: true,
        });
      }
    }
  } catch {
    // A frozen error keeps what it has: the rejection itself still reaches the host.
  }
  return error;
}

/** Marks a step logger whose destination the host chose (see stepLogger). */
const CHOSEN = Symbol("exactspawn.chosenLogger");

/**
 * Bound to one call: its events carry `step` and `correlationId`. `chosen`:
 * the host chose where the events go (its own logger, or a level through
 * EXACTSPAWN_LOG_LEVEL); only then is a failure logged at `error` — on the
 * library's own default stderr logger a rejected step is already the host's
 * to report, and a second line on stderr would only be noise (`debug`).
 */
export function stepLogger(
  base: Logger | undefined,
  identity: StepIdentity,
): Logger & { readonly [CHOSEN]?: boolean } {
  const chosen =
    base !== undefined || hostLoggerSet() || (process.env["EXACTSPAWN_LOG_LEVEL"] ?? "") !== "";
  const log = base ?? libraryLogger();
  const bindings = { step: identity.step, correlationId: identity.correlationId };
  const bound = typeof log.child === "function" ? log.child(bindings) : log;
  return Object.assign(Object.create(bound) as Logger, { [CHOSEN]: chosen });
}

/** What a start event reports about the step's environment: counts and sizes only. */
export interface StepStartFacts {
  readonly childPid: number | undefined;
  readonly spilled?: number;
  readonly spilledBytes?: number;
  readonly skipped?: number;
  readonly dropped?: number;
}

export function logStepStart(log: Logger, kind: "bash" | "spawn", facts: StepStartFacts): void {
  log.info({ event: "step.start", kind, ...facts }, "step started");
}

/**
 * How a step ended, read once from what the call settled with (the result
 * or the error), so the result, the error and the end event cannot disagree:
 * `failure` is the result's `failure` or the error's (null: it succeeded;
 * "error" for an error that is not a run failure, e.g. ENOENT), `ok` is
 * `failure === null`, and `durationMs` is the run's own (the result's or the
 * error's; the time since the call for what failed before it started).
 */
export interface StepRecord {
  readonly ok: boolean;
  readonly failure: string | null;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly durationMs: number;
}

export function stepRecord(
  startedAt: number,
  outcome: { ok: true; value: unknown } | { ok: false; error: unknown },
): StepRecord {
  const r = (outcome.ok ? outcome.value : outcome.error) as {
    exitCode?: unknown;
    signal?: unknown;
    failure?: unknown;
    durationMs?: unknown;
  } | null;
  const failure = outcome.ok
    ? typeof r?.failure === "string"
      ? r.failure
      : null
    : typeof r?.failure === "string"
      ? r.failure
      : "error";
  return {
    ok: failure === null,
    failure,
    exitCode: typeof r?.exitCode === "number" ? r.exitCode : null,
    signal: typeof r?.signal === "string" ? r.signal : null,
    durationMs: typeof r?.durationMs === "number" ? r.durationMs : performance.now() - startedAt,
  };
}

/**
 * Logs the end (info, the step's record) and, when the call rejects, an
 * error event too: status and duration, never output.
 */
export function logStepEnd(
  log: Logger,
  kind: "bash" | "spawn",
  childPid: number | undefined,
  startedAt: number,
  outcome: { ok: true; value: unknown } | { ok: false; error: unknown },
): void {
  const record = stepRecord(startedAt, outcome);
  // A cgroup-contained step's limit counts (docs/containment.md): with its
  // failure ("oom", "limit") they say which limit the step met.
  const limitEvents = (
    (outcome.ok ? outcome.value : outcome.error) as {
      contained?: { limitEvents?: unknown } | null;
    } | null
  )?.contained?.limitEvents;
  log.info(
    {
      event: "step.end",
      kind,
      childPid,
      ...record,
      ...(limitEvents != null ? { limitEvents } : {}),
    },
    "step finished",
  );
  if (outcome.ok) return;
  const e = outcome.error as { code?: unknown; syscall?: unknown } | null;
  const level = (log as { readonly [CHOSEN]?: boolean })[CHOSEN] === false ? "debug" : "error";
  log[level](
    {
      event: "step.failed",
      kind,
      childPid,
      code: typeof e?.code === "string" ? e.code : undefined,
      failure: record.failure,
      exitCode: record.exitCode,
      signal: record.signal,
      syscall: typeof e?.syscall === "string" ? e.syscall : undefined,
      durationMs: record.durationMs,
    },
    "step failed",
  );
}
