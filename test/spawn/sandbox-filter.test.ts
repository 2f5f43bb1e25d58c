/**
 * The seccomp program every sandboxed child installs, run here through a
 * small classic-BPF interpreter for both architectures it is built for. The
 * system call numbers come from the kernel's uapi headers on this machine
 * (an oracle outside the addon); calls newer than those headers are listed
 * from the kernel's syscall tables.
 *
 * Controls seen red once each by removing them from seccomp_filter.cc: the
 * architecture check (a foreign arch was allowed), the x32 check, the ioctl
 * rule, the keyctl rule, the setuid-bit rule, the memfd rule.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nativeBinding } from "../../src/native.js";

type Row = [number, number, number, number];
type Arch = "x86_64" | "aarch64";

const ALLOW = 0x7fff0000;
const KILL_PROCESS = 0x80000000;
const EPERM = 0x00050000 | 1;
const ENOSYS = 0x00050000 | 38;
const AUDIT_ARCH = { x86_64: 0xc000003e, aarch64: 0xc00000b7, i386: 0x40000003, arm: 0x40000028 };

/** Runs `program` on one seccomp_data; throws on anything the kernel would reject. */
function run(program: readonly Row[], arch: number, nr: number, args: readonly bigint[] = []) {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  args.forEach((arg, i) => {
    data.writeBigUInt64LE(BigInt.asUintN(64, arg), 16 + 8 * i);
  });
  let a = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const [code, jt, jf, k] = program[pc] as Row;
    switch (code) {
      case 0x20: // BPF_LD | BPF_W | BPF_ABS
        if (k % 4 !== 0 || k > 60) throw new Error(`bad load at ${pc}`);
        a = data.readUInt32LE(k);
        break;
      case 0x15: // BPF_JMP | BPF_JEQ | BPF_K
        pc += a === k >>> 0 ? jt : jf;
        break;
      case 0x45: // BPF_JMP | BPF_JSET | BPF_K
        pc += (a & k) !== 0 ? jt : jf;
        break;
      case 0x06: // BPF_RET | BPF_K
        return k >>> 0;
      default:
        throw new Error(`unknown instruction ${code} at ${pc}`);
    }
  }
  throw new Error("fell off the end of the program");
}

/** __NR_<name> from a uapi header, or from `extra` for calls newer than it. */
function numbers(header: string, extra: Record<string, number>): Record<string, number> {
  const table: Record<string, number> = { ...extra };
  for (const match of readFileSync(header, "utf8").matchAll(
    /#define __NR(?:3264)?_(\w+)\s+(\d+)/g,
  )) {
    table[match[1] as string] = Number(match[2]);
  }
  return table;
}

// syscall_64.tbl and asm-generic/unistd.h, Linux 6.13: fchmodat2 (6.6),
// setxattrat and removexattrat (6.13) share numbers on both.
const newer = { fchmodat2: 452, setxattrat: 463, removexattrat: 466 };
const HEADERS: Record<Arch, string> = {
  x86_64: "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
  aarch64: "/usr/include/asm-generic/unistd.h",
};

const binding = nativeBinding();
const hasFilter = typeof binding?.sandboxFilter === "function";

describe.runIf(hasFilter)("the sandbox's seccomp filter", () => {
  for (const arch of ["x86_64", "aarch64"] as const) {
    describe.runIf(existsSync(HEADERS[arch]))(arch, () => {
      const nr = numbers(HEADERS[arch], newer);
      const program = (network = false, execWritable = false) =>
        binding?.sandboxFilter?.({ arch, network, execWritable }) ?? [];
      const verdict = (name: string, args: bigint[] = [], net = false, execWritable = false) => {
        const number = nr[name];
        if (number === undefined) throw new Error(`no ${name} on ${arch}`);
        return run(program(net, execWritable), AUDIT_ARCH[arch], number, args);
      };

      it("is a program the kernel accepts: short, every jump inside, ends in a return", () => {
        for (const [net, ew] of [
          [false, false],
          [true, true],
        ] as const) {
          const rows = program(net, ew);
          expect(rows.length).toBeGreaterThan(0);
          expect(rows.length).toBeLessThan(4096);
          rows.forEach(([code, jt, jf], pc) => {
            if ((code & 0x07) === 0x05) expect(pc + 1 + Math.max(jt, jf)).toBeLessThan(rows.length);
          });
          expect((rows.at(-1) as Row)[0]).toBe(0x06);
        }
      });

      it("kills a system call from any other architecture", () => {
        const others = Object.entries(AUDIT_ARCH).filter(([name]) => name !== arch);
        for (const [, other] of others) {
          expect(run(program(), other, nr["write"] as number)).toBe(KILL_PROCESS);
          expect(run(program(true, true), other, nr["write"] as number)).toBe(KILL_PROCESS);
        }
      });

      if (arch === "x86_64") {
        it("refuses x32 system calls", () => {
          expect(run(program(), AUDIT_ARCH.x86_64, 0x40000000 | (nr["write"] as number))).toBe(
            EPERM,
          );
          expect(run(program(true, true), AUDIT_ARCH.x86_64, 0x40000000)).toBe(EPERM);
        });
      }

      it("lets ordinary calls through", () => {
        for (const name of ["read", "write", "openat", "execve", "clone", "mmap", "fchmodat"]) {
          expect(verdict(name, [0n, 0n, 0o755n])).toBe(ALLOW);
        }
        expect(verdict("ioctl", [1n, 0x5401n])).toBe(ALLOW); // TCGETS
        expect(verdict("fchmod", [3n, 0o1777n])).toBe(ALLOW); // the sticky bit is no privilege
      });

      it("refuses TIOCSTI and TIOCLINUX whatever the network and the high bits say", () => {
        for (const cmd of [0x5412n, 0x541cn, 0xffffffff_00005412n]) {
          expect(verdict("ioctl", [0n, cmd])).toBe(EPERM);
          expect(verdict("ioctl", [0n, cmd], true, true)).toBe(EPERM);
        }
      });

      it("refuses every keyring call", () => {
        for (const name of ["add_key", "request_key", "keyctl"]) {
          expect(verdict(name)).toBe(EPERM);
          expect(verdict(name, [], true, true)).toBe(EPERM);
        }
      });

      it("refuses setuid and setgid bits through every chmod", () => {
        const where = { chmod: 1, fchmod: 1, fchmodat: 2, fchmodat2: 2 } as const;
        for (const [name, index] of Object.entries(where)) {
          if (nr[name] === undefined) continue; // aarch64 has no chmod
          for (const mode of [0o4755n, 0o2755n, 0o6000n]) {
            const args = [0n, 0n, 0n];
            args[index] = mode;
            expect(verdict(name, args)).toBe(EPERM);
          }
          const plain = [0n, 0n, 0n];
          plain[index] = 0o755n;
          expect(verdict(name, plain)).toBe(ALLOW);
        }
      });

      it("refuses every owner and extended-attribute change, and io_uring", () => {
        const calls = [
          "chown",
          "fchown",
          "lchown",
          "fchownat",
          "setxattr",
          "lsetxattr",
          "fsetxattr",
          "setxattrat",
          "removexattr",
          "lremovexattr",
          "fremovexattr",
          "removexattrat",
          "io_uring_setup",
        ];
        for (const name of calls.filter((call) => nr[call] !== undefined)) {
          expect(verdict(name)).toBe(EPERM);
          expect(verdict(name, [], true, true)).toBe(EPERM);
        }
        expect(verdict("getxattr")).toBe(ALLOW);
      });

      it("refuses an executable memfd unless executeWritable", () => {
        const MFD_CLOEXEC = 1n;
        const MFD_NOEXEC_SEAL = 8n;
        expect(verdict("memfd_create", [0n, MFD_CLOEXEC])).toBe(EPERM);
        expect(verdict("memfd_create", [0n, MFD_CLOEXEC | MFD_NOEXEC_SEAL])).toBe(ALLOW);
        expect(verdict("memfd_create", [0n, MFD_CLOEXEC], false, true)).toBe(ALLOW);
      });

      it("refuses prlimit64 on any pid but the caller's own (0)", () => {
        const RLIMIT_CPU = 0n;
        const RLIMIT_NOFILE = 7n;
        for (const [net, ew] of [
          [false, false],
          [true, true],
        ] as const) {
          expect(verdict("prlimit64", [0n, RLIMIT_CPU, 1n, 0n], net, ew)).toBe(ALLOW);
          expect(verdict("prlimit64", [0n, RLIMIT_NOFILE, 0n, 1n], net, ew)).toBe(ALLOW);
          for (const pid of [1n, 4242n, 0x7fffffffn, 0xffffffffn, 0x1_00000000n + 7n]) {
            expect(verdict("prlimit64", [pid, RLIMIT_CPU, 1n, 0n], net, ew)).toBe(EPERM);
          }
        }
        // setrlimit and getrlimit act on the caller only, and stay.
        for (const name of ["setrlimit", "getrlimit"]) {
          if (nr[name] !== undefined) expect(verdict(name, [RLIMIT_NOFILE, 1n])).toBe(ALLOW);
        }
      });

      it("refuses another process's scheduling: only the caller itself (0), per process", () => {
        const [PRIO_PROCESS, PRIO_PGRP, PRIO_USER] = [0n, 1n, 2n];
        const [WHO_PROCESS, WHO_PGRP, WHO_USER] = [1n, 2n, 3n];
        const others = [1n, 4242n, 0xffffffffn, 0x1_00000000n + 7n];
        for (const [net, ew] of [
          [false, false],
          [true, true],
        ] as const) {
          for (const name of [
            "sched_setscheduler",
            "sched_setparam",
            "sched_setattr",
            "sched_setaffinity",
          ]) {
            expect(verdict(name, [0n, 5n, 0n], net, ew)).toBe(ALLOW);
            for (const pid of others) expect(verdict(name, [pid, 5n, 0n], net, ew)).toBe(EPERM);
          }
          expect(verdict("setpriority", [PRIO_PROCESS, 0n, 19n], net, ew)).toBe(ALLOW);
          expect(verdict("ioprio_set", [WHO_PROCESS, 0n, 0x6000n], net, ew)).toBe(ALLOW);
          for (const who of [0n, ...others]) {
            for (const which of [PRIO_PGRP, PRIO_USER]) {
              expect(verdict("setpriority", [which, who, 19n], net, ew)).toBe(EPERM);
            }
            for (const which of [WHO_PGRP, WHO_USER]) {
              expect(verdict("ioprio_set", [which, who, 0x6000n], net, ew)).toBe(EPERM);
            }
          }
          for (const who of others) {
            expect(verdict("setpriority", [PRIO_PROCESS, who, 19n], net, ew)).toBe(EPERM);
            expect(verdict("ioprio_set", [WHO_PROCESS, who, 0x6000n], net, ew)).toBe(EPERM);
          }
        }
        // Reading stays: getpriority, sched_getaffinity, ioprio_get.
        for (const name of ["getpriority", "sched_getaffinity", "ioprio_get"]) {
          expect(verdict(name, [1n, 4242n])).toBe(ALLOW);
        }
      });

      it("refuses setuid and setgid bits at creation: mknod, creat, open and openat", () => {
        const O_CREAT = 0o100n;
        const O_TMPFILE = 0o20000000n | 0o200000n;
        const O_WRONLY = 1n;
        const S_IFREG = 0o100000n;
        // [call, index of flags or -1, index of mode]
        const calls = [
          ["mknod", -1, 1],
          ["mknodat", -1, 2],
          ["creat", -1, 1],
          ["open", 1, 2],
          ["openat", 2, 3],
        ] as const;
        for (const [name, flagsAt, modeAt] of calls) {
          if (nr[name] === undefined) continue; // aarch64 has only mknodat and openat
          const args = (flags: bigint, mode: bigint) => {
            const list = [0n, 0n, 0n, 0n];
            if (flagsAt >= 0) list[flagsAt] = flags;
            list[modeAt] = mode;
            return list;
          };
          const creating = flagsAt >= 0 ? [O_CREAT | O_WRONLY, O_TMPFILE | O_WRONLY] : [0n];
          for (const flags of creating) {
            for (const mode of [0o4755n, 0o2755n, 0o6000n, S_IFREG | 0o6755n]) {
              expect(verdict(name, args(flags, mode))).toBe(EPERM);
              expect(verdict(name, args(flags, mode), true, true)).toBe(EPERM);
            }
            expect(verdict(name, args(flags, S_IFREG | 0o1777n))).toBe(ALLOW);
            expect(verdict(name, args(flags, 0o644n))).toBe(ALLOW);
          }
          // Without O_CREAT or O_TMPFILE the kernel ignores the mode.
          if (flagsAt >= 0) expect(verdict(name, args(O_WRONLY, 0o4755n))).toBe(ALLOW);
        }
        // mkdir's setid bits are dropped by the kernel: no rule.
        for (const name of ["mkdir", "mkdirat"]) {
          if (nr[name] !== undefined) expect(verdict(name, [0n, 0o6755n, 0o6755n])).toBe(ALLOW);
        }
      });

      it("answers openat2 with ENOSYS, so callers fall back to openat", () => {
        expect(verdict("openat2", [0n, 0n, 0n, 24n])).toBe(ENOSYS);
        expect(verdict("openat2", [0n, 0n, 0n, 24n], true, true)).toBe(ENOSYS);
      });

      it("limits sockets to AF_UNIX only while the network is off", () => {
        for (const name of ["socket", "socketpair"]) {
          expect(verdict(name, [1n])).toBe(ALLOW);
          expect(verdict(name, [2n])).toBe(EPERM);
          expect(verdict(name, [10n])).toBe(EPERM);
          expect(verdict(name, [2n], true)).toBe(ALLOW);
        }
      });
    });
  }

  it("rejects an unknown architecture with a TypeError", () => {
    expect(() =>
      binding?.sandboxFilter?.({
        arch: "riscv64" as "x86_64",
        network: false,
        execWritable: false,
      }),
    ).toThrow(TypeError);
  });
});
