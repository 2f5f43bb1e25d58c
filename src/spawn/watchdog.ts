/**
 * The watchdog that ends `cleanup` children with their host: one small
 * process per host process, reading a pipe from the host. Each line "+PGID"
 * registers a process group, "-PGID" releases it. When the host ends — in
 * any way, SIGKILL and the OOM killer included — the kernel closes the
 * host's end, the watchdog reads EOF after every line already written, and
 * SIGKILLs each group still registered.
 *
 * The program is POSIX sh (`/bin/sh`), so nothing else is shipped and both
 * engines run the same script. The native engine starts it through the addon
 * (posix_spawn; empty environment, cwd "/", only its stdin open, a session of
 * its own; registration and release happen natively, the release before the
 * leader is reaped). The fallback starts it with child_process and releases
 * a group from the child's "exit" event, i.e. just after Node reaped the
 * leader (see docs/spawn.md, "When the host dies", for that window).
 */
import { type ChildProcess, spawn as spawnChild } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { constants as osConstants } from "node:os";
import { systemError } from "../errors.js";

/**
 * Reads registrations until EOF, then kills what is left. The registrations
 * come from its arguments first (the fallback's replay of the live groups,
 * known from the exec on), then one per line of stdin. Each live group is
 * one shell variable `g_<pgid>` (set on "+", unset on "-": constant time
 * whatever the number of live groups); at EOF `set` lists them. A
 * registration that is not "+" or "-" and digits is ignored, so nothing but
 * a number reaches `eval`. A line "=/path" registers a cgroup
 * (native/core/cgroup.h: the host's sub-tree of contained steps), kept in
 * `c` one per line and never evaluated: at EOF each is killed whole
 * (cgroup.kill) and removed with the step cgroups in it once their
 * processes are gone (rmdir is refused while a process is left, so it is
 * tried again every 20 ms, for 4 s at most: a shell has no event to wait
 * on). Then the groups, listed with globbing off. Terminal and hang-up
 * signals are ignored (it has no terminal; its only job is to outlive the
 * host by the moment it takes to kill); SIGTERM and SIGKILL still stop it.
 */
export const WATCHDOG_SCRIPT = `trap '' HUP INT QUIT TSTP TTIN TTOU PIPE
c=
note() {
  case $1 in =/*) c="$c\${1#=}
"; return ;; esac
  case \${1#?} in '' | *[!0-9]*) return ;; esac
  case $1 in
    +*) eval "g_\${1#+}=1" ;;
    -*) unset "g_\${1#-}" ;;
  esac
}
for m in "$@"; do note "$m"; done
while IFS= read -r m; do note "$m"; done
printf %s "$c" | while IFS= read -r r; do
  echo 1 > "$r/cgroup.kill"
  i=0
  while [ -d "$r" ] && [ $i -lt 200 ]; do
    for s in "$r"/*/; do [ -d "$s" ] && rmdir "$s"; done
    rmdir "$r" && break
    i=$((i + 1))
    /bin/sleep 0.02
  done
done 2>/dev/null
unset c
set -f
for v in $(set); do case $v in g_[0-9]*=*) v=\${v%%=*}; kill -s KILL -- "-\${v#g_}" ;; esac; done 2>/dev/null`;

/** argv[0] names the process in `ps` (its comm stays "sh"). */
export const WATCHDOG_ARGV0 = "exactspawn-watchdog";

/** The program both engines start. */
export const WATCHDOG_PROGRAM: { readonly file: string; readonly argv: readonly string[] } =
  Object.freeze({
    file: "/bin/sh",
    argv: Object.freeze([WATCHDOG_ARGV0, "-c", WATCHDOG_SCRIPT]),
  });

/**
 * The bytes of arguments a replay may take: each costs its length, a NUL
 * and a pointer. Far below the 128 KiB floor of ARG_MAX (with the script,
 * some 3 KiB, and an empty environment): some 3,800 live groups.
 */
export const REPLAY_ARGUMENT_BYTES = 64 * 1024;

/** Splits the live groups between the arguments (first) and the pipe. */
export function splitReplay(groups: readonly number[]): {
  inArguments: string[];
  onPipe: number[];
} {
  const inArguments: string[] = [];
  let bytes = 0;
  let i = 0;
  for (; i < groups.length; i++) {
    const argument = `+${groups[i]}`;
    bytes += argument.length + 1 + 8;
    if (bytes > REPLAY_ARGUMENT_BYTES) break;
    inArguments.push(argument);
  }
  return { inArguments, onPipe: groups.slice(i) };
}

/** The fallback engine's watchdog: the same script, started with child_process. */
export class FallbackWatchdog {
  #child: ChildProcess | undefined;
  readonly #groups = new Set<number>();

  /**
   * Starts the watchdog unless it runs. Throws when it cannot start (e.g.
   * ENOENT for /bin/sh, syscall "access"), so the caller can refuse the spawn.
   */
  ensureRunning(): void {
    if (this.#child === undefined) this.#start();
  }

  /** Registers the group led by `pgid` (a watchdog that died meanwhile is replaced). */
  guard(pgid: number): void {
    this.#groups.add(pgid);
    if (this.#child === undefined) this.#restart();
    else this.#send(`+${pgid}\n`);
  }

  /** Unregisters the group (a no-op when it is not registered). */
  release(pgid: number): void {
    if (!this.#groups.delete(pgid)) return;
    if (this.#child !== undefined) this.#send(`-${pgid}\n`);
  }

  #start(): void {
    // child_process reports a failed exec only later, through "error": check first, loudly.
    accessSync(WATCHDOG_PROGRAM.file, constants.X_OK);
    // The live groups go in as arguments, so a watchdog that runs knows them
    // from its start: a host SIGKILLed the moment after this spawn, before
    // any write, still takes its steps along. What exceeds the argument
    // budget follows on the pipe.
    const replay = splitReplay([...this.#groups]);
    const argv = [...WATCHDOG_PROGRAM.argv.slice(1), WATCHDOG_ARGV0, ...replay.inArguments];
    const child = spawnChild(WATCHDOG_PROGRAM.file, argv, {
      argv0: WATCHDOG_ARGV0,
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
      cwd: "/",
      // Its stdin is a socket here: a bash installed as /bin/sh and started
      // under another name would source ~/.bashrc for such a stdin while
      // SHLVL is unset (its ssh heuristic).
      env: { SHLVL: "1" },
    });
    child.on("error", () => {});
    if (child.pid === undefined || child.stdin === null) {
      throw systemError(-osConstants.errno.EAGAIN, "spawn", WATCHDOG_PROGRAM.file);
    }
    child.stdin.on("error", () => {});
    child.once("exit", () => {
      // Died before the host: the next registration starts a new one with every live group.
      if (this.#child === child) this.#child = undefined;
      if (this.#groups.size > 0) this.#restart();
    });
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    this.#child = child;
    this.#send(replay.onPipe.map((g) => `+${g}\n`).join(""));
  }

  #restart(): void {
    try {
      this.#start();
    } catch {
      // No watchdog can be started now; the next guard() reports why.
    }
  }

  #send(lines: string): void {
    if (lines.length > 0) this.#child?.stdin?.write(lines);
  }
}
