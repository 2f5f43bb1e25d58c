// The kernel tier's checks (scripts/kernels.mjs runs this in each VM, as root, in the tree under
// test: its dist/ and its addon). What only a real kernel with every cgroup2 controller delegated
// shows: the limits and their reports, the OOM killer, memory.peak, the freeze fallback before
// 5.14, clone3(CLONE_INTO_CGROUP), the mount root of cgroup2, Landlock's ABIs, and a few ordinary
// spawns and bash steps as a smoke test of the kernel underneath.
import { spawnSync as nodeSpawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  cgroupSupport,
  createRuntime,
  nativeStatus,
  pidNamespaceSupport,
  SandboxError,
  sandboxSupport,
  spawn,
  spawnSync,
} from "../../dist/index.js";
import { assert, check, KERNEL, runChecks, skip } from "./harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const MiB = 1024 * 1024;
/** Landlock's ABI by kernel (docs/sandbox.md, Kernel requirements). */
const LANDLOCK_ABI =
  KERNEL >= 612
    ? 6
    : KERNEL >= 610
      ? 5
      : KERNEL >= 607
        ? 4
        : KERNEL >= 602
          ? 3
          : KERNEL >= 519
            ? 2
            : KERNEL >= 513
              ? 1
              : 0;

/** A node script of this directory run in a process of its own: its last stdout line as JSON. */
function child(script, args = [], wrap = null) {
  const argv = [join(here, script), ...args];
  const run = wrap
    ? nodeSpawnSync("sh", ["-c", wrap, "sh", process.execPath, ...argv], { encoding: "utf8" })
    : nodeSpawnSync(process.execPath, argv, { encoding: "utf8" });
  const last = run.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last);
  } catch {
    throw new Error(
      `${script}: exit ${run.status}, stdout ${run.stdout.slice(-400)}, stderr ${run.stderr.slice(-600)}`,
    );
  }
}

/** A pid is gone (or a zombie nobody reaped yet: no longer running, no longer in any cgroup). */
function gone(pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

check("probes", "kernel-support probes", () => {
  const status = nativeStatus();
  assert.equal(status.loaded, true, `addon not loaded: ${status.reason}`);
  const cgroup = cgroupSupport();
  assert.equal(cgroup.available, true, cgroup.reason ?? "");
  assert.equal(cgroup.parent, "/sys/fs/cgroup");
  for (const c of ["memory", "pids", "cpu"])
    assert.ok(cgroup.controllers.includes(c), `controller ${c}: ${cgroup.controllers}`);
  const pidns = pidNamespaceSupport();
  assert.equal(
    pidns.available,
    true,
    `pidNamespaceSupport: ${pidns.reason}; helper ${JSON.stringify(status.helper)}`,
  );
  const sandbox = sandboxSupport();
  assert.equal(sandbox.landlockAbi, LANDLOCK_ABI, "Landlock ABI");
  assert.equal(sandbox.seccompFilter, true);
  assert.equal(sandbox.readOnlyViewUnavailable, KERNEL < 512 ? "kernel" : undefined);
  const kill =
    existsSync("/sys/fs/cgroup/init.scope/cgroup.kill") ||
    existsSync(`${cgroup.parent}/cgroup.kill`);
  return `file ${status.file}; Landlock ABI ${sandbox.landlockAbi}; missing [${sandbox.missing}]; readOnlyView ${sandbox.readOnlyView}; controllers ${cgroup.controllers.join(" ")}; cgroup.kill at the root ${kill}`;
});

check("spawns", "ordinary spawns", async () => {
  const echo = await spawn("/bin/echo", ["hello", "kernel"]);
  assert.equal(echo.stdout, "hello kernel\n");
  const env = await spawn("/usr/bin/env", [], { env: { ONLY: "this" } });
  assert.equal(env.stdout, "ONLY=this\n");
  const failed = await spawn("/bin/sh", ["-c", "exit 3"], { reject: false });
  assert.equal(failed.exitCode, 3);
  assert.equal(failed.failure, "exit");
  const signalled = await spawn("/bin/sh", ["-c", "kill -TERM $$"], { reject: false });
  assert.equal(signalled.signal, "SIGTERM");
  const sync = spawnSync("/bin/cat", [], { input: "in\n" });
  assert.equal(sync.stdout, "in\n");
});

check("bash", "bash steps and a spill", async () => {
  const runtime = createRuntime();
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's ${#VAR}, not a template
  const step = await runtime.bash('echo "$RECIPE_VAR_A-${#RECIPE_VAR_BIG}"', {
    values: { A: "a", BIG: "x".repeat(300_000) },
  });
  assert.equal(step.stdout, "a-300000\n");
  assert.equal(step.contained?.mechanism, "cgroup");
  const sequence = [];
  for (let i = 0; i < 5; i++) sequence.push((await runtime.bash(`echo ${i}`)).stdout);
  assert.deepEqual(sequence, ["0\n", "1\n", "2\n", "3\n", "4\n"]);
});

// Before anything in this process asks for a limit (which enables the controllers of the
// sub-tree): a fresh host's first plain contained step.
check("first-peak", "memory peak of a fresh host's first contained step", () => {
  const first = child("first-step.mjs");
  if (KERNEL < 519) {
    assert.equal(first.memoryPeakBytes, null, "memory.peak before Linux 5.19");
    return "null: no memory.peak before Linux 5.19 (documented)";
  }
  assert.equal(
    typeof first.memoryPeakBytes,
    "number",
    `first step's memoryPeakBytes ${first.memoryPeakBytes}`,
  );
  assert.ok(first.memoryPeakBytes > 0);
  return `${first.memoryPeakBytes} bytes`;
});

check("pids", "pidsMax: a fork bomb stays at the limit", async () => {
  // perl's fork fails at once with EAGAIN (bash retries for seconds); each child sleeps.
  const bomb =
    "my ($n, $f) = (0, 0); for (1..100) { my $p = fork; if (!defined $p) { $f++; next } if (!$p) { sleep 60; exit 0 } $n++ } " +
    'open my $c, "<", "/proc/self/cgroup"; my ($g) = <$c> =~ /^0::(\\S+)/; my $d = "/sys/fs/cgroup$g"; ' +
    'open my $x, "<", "$d/pids.current"; my $cur = <$x>; chomp $cur; open my $e, "<", "$d/pids.events"; my ($m) = join("", <$e>) =~ /max (\\d+)/; ' +
    'print "$n $f $cur $m\\n";';
  const result = await spawn("/usr/bin/perl", ["-e", bomb], {
    contain: { pidsMax: 20 },
    reject: false,
  });
  const [forked, refused, current, events] = result.stdout.trim().split(" ").map(Number);
  assert.equal(forked, 19, `forked ${forked}`);
  assert.equal(current, 20);
  assert.equal(refused, 81);
  assert.ok(events >= 81, `pids.events max ${events}`);
  assert.deepEqual(result.contained.limits, { pidsMax: 20 });
  assert.equal(result.exitCode, 0);
  const limitEvents = result.contained.limitEvents;
  if (limitEvents !== undefined)
    assert.ok(limitEvents.pidsMax >= 81, `limitEvents.pidsMax ${limitEvents?.pidsMax}`);
  return `forked ${forked}, refused ${refused}, pids.current ${current}, pids.events max ${events}; failure ${result.failure}${limitEvents ? `; limitEvents ${JSON.stringify(limitEvents)}` : ""}`;
});

check("oom-leader", "memoryMax: the leader's OOM ends SIGKILL with failure oom", async () => {
  const result = await spawn("/usr/bin/tail", ["/dev/zero"], {
    contain: { memoryMax: 64 * MiB },
    reject: false,
  });
  assert.equal(result.signal, "SIGKILL");
  assert.equal(result.failure, "oom");
  assert.deepEqual(result.contained.limits, { memoryMax: 64 * MiB });
  const peak = result.resourceUsage.memoryPeakBytes;
  if (KERNEL >= 519)
    assert.ok(peak > 32 * MiB && peak <= 64 * MiB + MiB, `memoryPeakBytes ${peak}`);
  else assert.equal(peak, null, "no memory.peak before 5.19");
  const limitEvents = result.contained.limitEvents;
  if (limitEvents !== undefined)
    assert.ok(limitEvents.oomKill >= 1, `limitEvents.oomKill ${limitEvents?.oomKill}`);
  return `memoryPeakBytes ${peak}${limitEvents ? `; limitEvents ${JSON.stringify(limitEvents)}` : ""}`;
});

check("oom-child", "memoryMax: a child's OOM while the leader exits 0 is failure oom", async () => {
  const result = await spawn("/bin/sh", ["-c", "/usr/bin/tail /dev/zero; exit 0"], {
    contain: { memoryMax: 64 * MiB },
    reject: false,
  });
  assert.equal(result.failure, "oom");
  assert.equal(result.signal, null);
  const limitEvents = result.contained.limitEvents;
  if (limitEvents !== undefined) {
    // With the limit report (issue 36.3), reject follows failure.
    const rejected = await spawn("/bin/sh", ["-c", "/usr/bin/tail /dev/zero; exit 0"], {
      contain: { memoryMax: 64 * MiB },
    }).then(
      () => null,
      (error) => error,
    );
    assert.equal(rejected?.failure, "oom", "reject follows failure oom");
  }
  return `exitCode ${result.exitCode}, failure ${result.failure}`;
});

check("peak", "memory peak after a memoryMax step", async () => {
  const result = await spawn(
    "/bin/sh",
    ["-c", "head -c 30000000 /dev/zero | tail -c 20000000 >/dev/null"],
    { contain: { memoryMax: 256 * MiB } },
  );
  const peak = result.resourceUsage.memoryPeakBytes;
  if (KERNEL < 519) {
    assert.equal(peak, null);
    return "null: no memory.peak before Linux 5.19 (documented)";
  }
  assert.ok(peak > 20_000_000, `memoryPeakBytes ${peak}`);
  return `${peak} bytes`;
});

const busy = (seconds, contain) =>
  spawn("/bin/sh", ["-c", "while :; do :; done"], {
    contain,
    timeout: seconds * 1000,
    killGraceMs: 100,
    reject: false,
  });
const cpuRatio = (r) =>
  (r.resourceUsage.userCpuMicros + r.resourceUsage.systemCpuMicros) / 1000 / r.durationMs;

check("cpu", "cpuMax 0.5 holds a busy loop to about half a CPU", async () => {
  const capped = await busy(5, { cpuMax: 0.5 });
  assert.equal(capped.failure, "timeout");
  assert.deepEqual(capped.contained.limits, { cpuMax: 0.5 });
  const ratio = cpuRatio(capped);
  // 0.5 of one CPU, within 0.15 up (a period's overrun at the ends) and down to 0.2 (a vCPU
  // starved by a loaded host runs less).
  assert.ok(ratio <= 0.65 && ratio >= 0.2, `ratio ${ratio.toFixed(2)}`);
  const free = cpuRatio(await busy(3, true));
  const limitEvents = capped.contained.limitEvents;
  if (limitEvents !== undefined)
    assert.ok(limitEvents.cpuThrottledPeriods > 0, `limitEvents ${JSON.stringify(limitEvents)}`);
  return `capped ${ratio.toFixed(2)} CPU (bound 0.20–0.65), uncapped ${free.toFixed(2)} CPU${limitEvents ? `; limitEvents ${JSON.stringify(limitEvents)}` : ""}`;
});

check("cpu-floor", "cpuMax below the kernel's 1 ms quota floor is raised to it", async () => {
  const result = await busy(2, { cpuMax: 0.001 });
  assert.equal(result.failure, "timeout");
  assert.deepEqual(result.contained.limits, { cpuMax: 0.001 });
  const ratio = cpuRatio(result);
  assert.ok(ratio < 0.05, `ratio ${ratio.toFixed(3)}`);
  return `${ratio.toFixed(3)} CPU`;
});

check(
  "tree-kill",
  "the tree is killed at the end (cgroup.kill, or the freeze fallback before 5.14)",
  async () => {
    // Escapers that ignore SIGTERM: only a SIGKILL ends them.
    const escapers = [
      "setsid sh -c 'trap \"\" TERM HUP INT; echo $$ >> /tmp/kt-escapers; exec sleep 1000 >/dev/null' &",
      "(sh -c 'trap \"\" TERM HUP INT; echo $$ >> /tmp/kt-escapers; exec sleep 1000 >/dev/null' &)",
      "nohup sh -c 'trap \"\" TERM HUP INT; echo $$ >> /tmp/kt-escapers; exec sleep 1000 >/dev/null' 2>/dev/null &",
      // The leader ends once the three have written their pids.
      'while [ "$(wc -l < /tmp/kt-escapers)" -lt 3 ]; do sleep 0.1; done; cat /tmp/kt-escapers',
    ].join("\n");
    writeFileSync("/tmp/kt-escapers", "");
    const result = await spawn("/bin/sh", ["-c", escapers], { contain: true });
    const pids = result.stdout.trim().split("\n").map(Number);
    assert.equal(pids.length, 3);
    assert.deepEqual(
      pids.filter((pid) => !gone(pid)),
      [],
    );
    const leftover = existsSync("/sys/fs/cgroup")
      ? nodeSpawnSync("sh", ["-c", "ls -d /sys/fs/cgroup/exactspawn-*/s* 2>/dev/null"], {
          encoding: "utf8",
        }).stdout.trim()
      : "";
    assert.equal(leftover, "");
    return KERNEL < 514 ? "freeze, SIGKILL, thaw (no cgroup.kill before 5.14)" : "cgroup.kill";
  },
  60,
);

check(
  "clone3",
  "clone3(CLONE_INTO_CGROUP): a host whose own cgroup is at pids.max still starts contained steps",
  () => {
    if (process.arch !== "x64") skip("clone3's entry is written for x86-64 only");
    const outcome = child("clone-into-cgroup.mjs");
    assert.equal(
      outcome.uncontained,
      "refused",
      `uncontained spawn from a full cgroup: ${outcome.uncontained}`,
    );
    assert.equal(outcome.contained, "ran", `contained spawn: ${outcome.contained}`);
    return `uncontained: ${outcome.uncontainedError}; contained: exit 0`;
  },
);

check("mount-root", "the cgroup2 mount of the hierarchy's root is the one used", () => {
  mkdirSync("/sys/fs/cgroup/kt-sub", { recursive: true });
  try {
    const script =
      'mount --make-rprivate / && mkdir -p /tmp/kt-a /tmp/kt-b && mount --bind /sys/fs/cgroup/kt-sub /tmp/kt-a && umount -l /sys/fs/cgroup && mount -t cgroup2 cgroup2 /tmp/kt-b && exec "$@"';
    const outcome = child("mount-root.mjs", [], `unshare -m sh -c '${script}' sh "$@"`);
    assert.equal(outcome.parent, "/tmp/kt-b", `cgroupSupport().parent ${outcome.parent}`);
    assert.equal(outcome.exitCode, 0);
    return `a bind mount of /kt-sub listed first at /tmp/kt-a; parent ${outcome.parent}`;
  } finally {
    rmSync("/sys/fs/cgroup/kt-sub", { recursive: true, force: true });
  }
});

check(
  "sandbox",
  "sandbox: refused without Landlock, or confined with this kernel's ABI",
  async () => {
    const dir = "/tmp/kt-writable";
    mkdirSync(dir, { recursive: true });
    const missing = sandboxSupport().missing;
    const write = ["-c", `echo ok > ${dir}/f && if echo no > /root/kt-denied; then echo WROTE; fi`];
    if (LANDLOCK_ABI === 0) {
      assert.ok(missing.includes("filesystem"), `missing ${missing}`);
      const refused = await spawn("/bin/sh", write, { sandbox: { writable: [dir] } }).then(
        () => null,
        (error) => error,
      );
      assert.ok(refused instanceof SandboxError, `not refused: ${refused}`);
      assert.equal(refused.code, "ERR_EXACTSPAWN_SANDBOX_UNAVAILABLE");
      assert.ok(refused.missing.includes("filesystem"));
      const weaker = await spawn("/bin/sh", write, {
        sandbox: { writable: [dir], allowWeaker: [...missing] },
      });
      assert.match(weaker.stdout, /WROTE/, "without Landlock nothing confines the file system");
      rmSync("/root/kt-denied", { force: true });
      return `refused: ${refused.message}; accepted with allowWeaker [${missing}]: not confined`;
    }
    const expected = LANDLOCK_ABI <= 2 ? ["truncate", "ioctl"] : LANDLOCK_ABI <= 4 ? ["ioctl"] : [];
    assert.deepEqual([...missing].sort(), [...expected].sort());
    if (missing.length > 0) {
      const refused = await spawn("/bin/sh", write, { sandbox: { writable: [dir] } }).then(
        () => null,
        (error) => error,
      );
      assert.ok(refused instanceof SandboxError, `not refused: ${refused}`);
      assert.deepEqual([...refused.missing].sort(), [...expected].sort());
    }
    const confined = await spawn("/bin/sh", write, {
      sandbox: { writable: [dir], allowWeaker: [...missing] },
    });
    assert.equal(confined.stdout.includes("WROTE"), false, "wrote outside writable");
    assert.equal(readFileSync(`${dir}/f`, "utf8"), "ok\n");
    return `ABI ${LANDLOCK_ABI}; missing [${missing}]; a write outside writable refused: ${confined.stderr.trim().split("\n").pop()}`;
  },
);

check("pidns", "a contained step in a PID namespace", async () => {
  const result = await spawn("/bin/sh", ["-c", "echo $$"], {
    contain: { mechanism: "pid-namespace" },
  });
  assert.equal(result.stdout, "2\n");
  assert.equal(result.contained.mechanism, "pid-namespace");
});

// Exit even if a check left a step running (a mutant that never lets it settle).
process.exit(await runChecks());
