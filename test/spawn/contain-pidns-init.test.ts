/**
 * What the PID namespace's init (native/helper/init.cc) owes the leader, as
 * root with `mechanism: "pid-namespace"` forced:
 * - a signal sent to the step reaches the leader even after the leader left
 *   its own process group (the init signals the group, and the leader alone
 *   when that group is gone: red with the group only, row
 *   pidns-forward-leader-alone);
 * - the step reports the leader's own status, not that of a process reaped
 *   after it: the leader here leaves a child that exited 5 unreaped and
 *   exits 7; at its exit that zombie passes to the init, which reaps both in
 *   one pass, the leader first (red with the last reaped status recorded,
 *   row pidns-leader-status-not-last).
 * The leaders are small perl programs (perl's fork and setpgid; no shell
 * can leave its own group or keep a zombie).
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nativeStatus, pidNamespaceSupport, spawn } from "../../src/index.js";

const PERL = "/usr/bin/perl";
const canContain =
  nativeStatus().loaded &&
  process.getuid?.() === 0 &&
  pidNamespaceSupport().available &&
  existsSync(PERL);
const PIDNS = { mechanism: "pid-namespace" } as const;

/** Moves into a group of a child's, says so, exits 5 at SIGUSR1. */
const LEAVES_ITS_GROUP = `
$SIG{USR1} = sub { print "usr1\\n"; exit 5 };
my $c = fork;
if (!$c) { sleep 1000; exit 0 }
setpgrp($c, $c) or die "setpgid child: $!";
setpgrp(0, $c) or die "setpgid self: $!";
$| = 1;
print "pgid ", getpgrp(), " pid $$\\n";
sleep 1 while 1;
`;

/** Leaves an unreaped child that exited 5 (SIGCHLD says it is a zombie), then exits 7. */
const LEAVES_A_ZOMBIE = `
my $zombie = 0;
$SIG{CHLD} = sub { $zombie = 1 }; # delivered once the child is a zombie; it is never reaped
my $c = fork;
if (!$c) { exit 5 }
sleep 1 until $zombie;
exit 7;
`;

describe.runIf(canContain)("the PID namespace's init and its leader", () => {
  it("a signal reaches a leader that left its own process group", async () => {
    const child = spawn(PERL, ["-e", LEAVES_ITS_GROUP], {
      contain: PIDNS,
      timeout: 20_000,
      reject: false,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let moved = "";
    for await (const line of child.lines()) {
      moved = line;
      break;
    }
    expect(moved).toMatch(/^pgid (\d+) pid 2$/);
    expect(moved).not.toBe("pgid 2 pid 2");
    child.kill("SIGUSR1");
    const result = await child;
    expect(result).toMatchObject({ exitCode: 5, signal: null, failure: "exit" });
    expect(result.stdout).toContain("usr1");
  });

  it("the leader's own exit is reported, not a zombie's the init reaps after it", async () => {
    for (let i = 0; i < 5; i++) {
      const result = await spawn(PERL, ["-e", LEAVES_A_ZOMBIE], {
        contain: PIDNS,
        reject: false,
      });
      expect(result).toMatchObject({ exitCode: 7, signal: null });
    }
  });
});
