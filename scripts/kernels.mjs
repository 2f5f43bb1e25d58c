#!/usr/bin/env node
// npm run test:kernels [-- --kernel 5.10,6.1,6.12] [--tree DIR] [--timeout SECONDS] [--memory MiB]
//
// The kernel tier: the checks of test/kernels/ on the kernels users run (Debian's own: bullseye
// 5.10, bookworm 6.1, trixie 6.12), each booted in a qemu VM under TCG (no /dev/kvm needed),
// one VM at a time. What only a real kernel with every cgroup2 controller shows: the limits and
// their reports, the OOM killer, memory.peak, the freeze fallback before 5.14, clone3 into a
// cgroup, Landlock's absence (5.10) and its older ABIs.
//
// First use: `apt-get install qemu-system-x86 busybox-static` when either is missing (root);
// each kernel's .deb is fetched with `apt-get download` through a private apt state (its own
// sources list, lists and cache; the machine's apt sources, lists and package set are not
// touched; the .deb is checked by apt against the suite's signed index), unpacked with
// `dpkg-deb -x`, and reduced to its vmlinuz and the modules the guest needs (9p, virtio,
// overlay and what they depend on, read from each module's .modinfo). A busybox-static
// initramfs is made for it. Both are cached in node_modules/.cache/exactspawn-kernels
// (EXACTSPAWN_KERNELS overrides), so later runs boot at once.
//
// The guest: the host's `/` read-only over virtio-9p under a tmpfs overlay, cgroup2 at
// /sys/fs/cgroup with every controller (cgroup_no_v1=all) in the root's subtree_control; it runs
// `node test/kernels/run.mjs` from the tree (--tree, default this checkout: its dist/ and its
// addon, build/Release before prebuilds/), which prints one `KTEST {json}` line per check on
// the serial console, then powers off. Each check passes, fails, or is skipped with why.
// Every step's time is printed. Exit status: 0 when every check of every kernel passed or was
// skipped, 1 otherwise (a kernel that did not boot or finish in --timeout included).
import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { KERNEL_MUTANTS } from "./kernels-mutants.mjs";
import { copyTreeFiles } from "./tree-copy.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** kernel → the Debian suite whose linux-image-amd64 gives it. */
export const KERNELS = {
  "5.10": { suite: "bullseye" },
  6.1: { suite: "bookworm" },
  6.12: { suite: "trixie" },
};

/** The modules the initramfs loads (their dependencies are added from .modinfo). */
const MODULES = ["virtio_pci", "9pnet_virtio", "9p", "overlay"];

export const CACHE =
  process.env["EXACTSPAWN_KERNELS"] ?? join(root, "node_modules", ".cache", "exactspawn-kernels");

function log(line) {
  process.stdout.write(`kernels: ${line}\n`);
}

/** Runs `what` and prints how long it took. */
function timed(name, what) {
  const t0 = Date.now();
  const value = what();
  log(`${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return value;
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: "utf8", ...options });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) {
    const why = `${result.stderr ?? ""}`.trim().split("\n").slice(-3).join(" / ");
    throw new Error(
      `${command} ${args.slice(-2).join(" ")} failed (exit ${result.status}): ${why}`,
    );
  }
  return result.stdout;
}

function onPath(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" }).status === 0;
}

/** A statically linked busybox (the initramfs has no C library): busybox-static's. */
function staticBusybox() {
  for (const file of ["/bin/busybox", "/usr/bin/busybox"]) {
    if (!existsSync(file)) continue;
    // A dynamic ELF has a PT_INTERP program header (type 3).
    const elf = readFileSync(file);
    const phoff = Number(elf.readBigUInt64LE(0x20));
    const phentsize = elf.readUInt16LE(0x36);
    const phnum = elf.readUInt16LE(0x38);
    let dynamic = false;
    for (let i = 0; i < phnum; i++)
      if (elf.readUInt32LE(phoff + i * phentsize) === 3) dynamic = true;
    if (!dynamic) return file;
  }
  return null;
}

/** qemu-system-x86 and busybox-static, installed with apt where missing. */
export function ensureTools() {
  const need = [];
  if (!onPath("qemu-system-x86_64")) need.push("qemu-system-x86");
  if (staticBusybox() === null) need.push("busybox-static");
  if (need.length > 0) {
    timed(`apt-get install ${need.join(" ")}`, () => {
      run("apt-get", ["-qq", "update"]);
      run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...need], {
        env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      });
    });
  }
  const busybox = staticBusybox();
  if (busybox === null)
    throw new Error("no statically linked busybox after installing busybox-static");
  return { busybox };
}

/** apt options of a private apt state for one suite: nothing of the machine's apt state is read or written. */
function aptOptions(state) {
  return [
    `Dir::State=${state}`,
    "Dir::State::status=/dev/null",
    `Dir::Cache=${join(state, "cache")}`,
    `Dir::Etc::SourceList=${join(state, "sources.list")}`,
    "Dir::Etc::SourceParts=/dev/null",
    "APT::Architecture=amd64",
    ...(process.getuid?.() === 0 ? ["APT::Sandbox::User=root"] : []),
  ].flatMap((option) => ["-o", option]);
}

/** The `depends=` list of a module file's .modinfo (the module's own strings). */
function modinfoDepends(bytes) {
  const text = bytes.toString("latin1");
  const at = text.indexOf("\0depends=");
  if (at < 0) return [];
  const end = text.indexOf("\0", at + 1);
  return text
    .slice(at + 9, end)
    .split(",")
    .filter((name) => name !== "");
}

function readModule(file, busybox) {
  if (file.endsWith(".xz"))
    return spawnSync(busybox, ["unxz", "-c", file], { maxBuffer: 1 << 28 }).stdout;
  if (file.endsWith(".zst")) return spawnSync("zstd", ["-dc", file], { maxBuffer: 1 << 28 }).stdout;
  return readFileSync(file);
}

/** All files under dir (recursively). */
function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

/**
 * The kernel of a suite: { dir, version, vmlinuz, modules: [names in load order] } — fetched,
 * unpacked and reduced to what the guest needs on first use, cached afterwards.
 */
export function kernelDir(kernel, busybox) {
  const { suite } = KERNELS[kernel];
  const dir = join(CACHE, suite);
  if (existsSync(join(dir, "kernel.json"))) {
    return { dir, ...JSON.parse(readFileSync(join(dir, "kernel.json"), "utf8")) };
  }
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  const state = join(partial, "apt");
  for (const sub of ["lists/partial", "cache/archives/partial"])
    mkdirSync(join(state, sub), { recursive: true });
  writeFileSync(
    join(state, "sources.list"),
    `deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian ${suite} main\n`,
  );
  try {
    const options = aptOptions(state);
    const deb = timed(`${suite}: apt-get update + download of the kernel`, () => {
      run("apt-get", [...options, "-qq", "update"]);
      const shown = run("apt-cache", [...options, "show", "linux-image-amd64"]);
      const image = /^Depends: ([^\s,]+)/m.exec(shown)?.[1];
      if (image === undefined) throw new Error(`${suite}: linux-image-amd64 names no kernel image`);
      run("apt-get", [...options, "-qq", "download", image], { cwd: partial });
      const file = readdirSync(partial).find((name) => name.endsWith(".deb"));
      if (file === undefined) throw new Error(`${suite}: apt-get download ${image} left no .deb`);
      return file;
    });
    const unpacked = join(partial, "unpacked");
    timed(`${suite}: dpkg-deb -x ${deb}`, () =>
      run("dpkg-deb", ["-x", join(partial, deb), unpacked]),
    );
    const vmlinuz = walk(join(unpacked, "boot")).find((file) =>
      basename(file).startsWith("vmlinuz-"),
    );
    if (vmlinuz === undefined) throw new Error(`${deb} holds no /boot/vmlinuz-*`);
    const version = basename(vmlinuz).slice("vmlinuz-".length);
    const moduleRoot = [
      join(unpacked, "lib/modules", version),
      join(unpacked, "usr/lib/modules", version),
    ].find(existsSync);
    if (moduleRoot === undefined) throw new Error(`${deb} holds no modules for ${version}`);
    const byName = new Map();
    for (const file of walk(moduleRoot)) {
      const match = /^(.+)\.ko(\.xz|\.zst)?$/.exec(basename(file));
      if (match) byName.set(match[1].replaceAll("-", "_"), file);
    }
    // Dependencies first; a module built into this kernel has no file and needs no load.
    const order = [];
    mkdirSync(join(partial, "modules"));
    const add = (name) => {
      const key = name.replaceAll("-", "_");
      if (order.includes(key) || !byName.has(key)) return;
      const bytes = readModule(byName.get(key), busybox);
      for (const dependency of modinfoDepends(bytes)) add(dependency);
      writeFileSync(join(partial, "modules", `${key}.ko`), bytes);
      order.push(key);
    };
    for (const name of MODULES) add(name);
    renameSync(vmlinuz, join(partial, "vmlinuz"));
    const config = walk(join(unpacked, "boot")).find((file) =>
      basename(file).startsWith("config-"),
    );
    if (config) renameSync(config, join(partial, "config"));
    const record = { version, deb, vmlinuz: "vmlinuz", modules: order };
    rmSync(unpacked, { recursive: true, force: true });
    rmSync(join(partial, deb));
    rmSync(state, { recursive: true, force: true });
    writeFileSync(join(partial, "kernel.json"), `${JSON.stringify(record, null, 2)}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
    return { dir, ...record };
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** A cpio archive in the kernel's "newc" format from [name, mode, data] entries. */
function cpio(entries) {
  const parts = [];
  let ino = 1;
  const pad = (length) => Buffer.alloc((4 - (length % 4)) % 4);
  const header = (name, mode, size) => {
    const fields = [ino++, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, Buffer.byteLength(name) + 1, 0];
    const text = `070701${fields.map((n) => n.toString(16).padStart(8, "0")).join("")}`;
    const head = Buffer.from(`${text}${name}\0`, "latin1");
    return Buffer.concat([head, pad(head.length)]);
  };
  for (const [name, mode, data] of [...entries, ["TRAILER!!!", 0, Buffer.alloc(0)]]) {
    parts.push(header(name, mode, data.length), data, pad(data.length));
  }
  return Buffer.concat(parts);
}

const DIR = 0o040755;
const FILE = 0o100755;

/** The initramfs's /init: modules, the host's / under an overlay, then the guest's own init. */
function initScript(modules) {
  return `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in ${modules.join(" ")}; do insmod /modules/$m.ko || echo "KTEST-INIT insmod $m failed"; done
mkdir -p /lower /upper /root
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /lower || echo "KTEST-INIT 9p mount failed"
mount -t tmpfs -o mode=0755 upper /upper
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w root /root || echo "KTEST-INIT overlay mount failed"
umount /proc /sys /dev
cp /guest-init /root/exactspawn-guest-init
exec switch_root /root /bin/sh /exactspawn-guest-init
`;
}

/** The guest's init, after switch_root into the overlay. */
const GUEST_INIT = `export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t cgroup2 cgroup2 /sys/fs/cgroup
for c in $(cat /sys/fs/cgroup/cgroup.controllers); do echo "+$c" > /sys/fs/cgroup/cgroup.subtree_control; done
for word in $(cat /proc/cmdline); do case "$word" in es_tree=*) tree="\${word#es_tree=}";; es_only=*) export EXACTSPAWN_KERNEL_ONLY="\${word#es_only=}";; es_script=*) export EXACTSPAWN_KERNEL_SCRIPT="\${word#es_script=}";; esac; done
# A /tmp of the guest's own, unless the tree is there (a clone in /tmp: the
# overlay's /tmp, writable in its tmpfs upper layer, then serves).
case "$tree" in /tmp/*) ;; *) mount -t tmpfs -o mode=1777 tmp /tmp;; esac
mount -t tmpfs -o mode=0755 run /run
mkdir -p /dev/shm /dev/pts && mount -t tmpfs -o mode=1777 shm /dev/shm && mount -t devpts devpts /dev/pts
hostname kernels
echo "KTEST-BOOTED $(cut -d' ' -f1 /proc/uptime) $(uname -r) controllers: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
cd "$tree" && node test/kernels/\${EXACTSPAWN_KERNEL_SCRIPT:-run.mjs}
echo "KTEST-END $?"
echo o > /proc/sysrq-trigger
sleep 30
`;

/** The initramfs of a kernel (cached beside it). */
export function initramfs(kernel, busybox) {
  const file = join(kernel.dir, "initramfs.cpio");
  const init = initScript(kernel.modules);
  const stamp = join(kernel.dir, "initramfs.stamp");
  const want = `${init}${GUEST_INIT}${statSync(busybox).size}`;
  if (existsSync(file) && existsSync(stamp) && readFileSync(stamp, "utf8") === want) return file;
  const entries = [
    ["bin", DIR, Buffer.alloc(0)],
    ["bin/busybox", FILE, readFileSync(busybox)],
    ["proc", DIR, Buffer.alloc(0)],
    ["sys", DIR, Buffer.alloc(0)],
    ["dev", DIR, Buffer.alloc(0)],
    ["modules", DIR, Buffer.alloc(0)],
    ...kernel.modules.map((m) => [
      `modules/${m}.ko`,
      0o100644,
      readFileSync(join(kernel.dir, "modules", `${m}.ko`)),
    ]),
    ["init", FILE, Buffer.from(init)],
    ["guest-init", FILE, Buffer.from(GUEST_INIT)],
  ];
  writeFileSync(`${file}.tmp`, cpio(entries));
  renameSync(`${file}.tmp`, file);
  writeFileSync(stamp, want);
  return file;
}

/**
 * Boots one kernel and runs the guest checks: { booted (s, guest uptime at the guest init),
 * wall (s), results: [{ name, status, why, ms }], end (exit status of run.mjs or null), log }.
 */
export function boot(kernelName, kernel, initrd, { tree, timeout, memory, only }) {
  const append = [
    "console=ttyS0",
    "loglevel=4",
    "panic=-1",
    "no_timer_check",
    "cgroup_no_v1=all",
    "rdinit=/init",
    `es_tree=${tree}`,
    ...(only ? [`es_only=${only}`] : []),
    ...(process.env["EXACTSPAWN_KERNEL_SCRIPT"]
      ? [`es_script=${process.env["EXACTSPAWN_KERNEL_SCRIPT"]}`]
      : []),
  ].join(" ");
  const args = [
    "-accel",
    process.env["EXACTSPAWN_KERNELS_ACCEL"] ?? "tcg",
    "-m",
    String(memory),
    "-smp",
    "2",
    "-nographic",
    "-no-reboot",
    "-monitor",
    "none",
    "-serial",
    "stdio",
    "-kernel",
    join(kernel.dir, kernel.vmlinuz),
    "-initrd",
    initrd,
    "-append",
    append,
    "-fsdev",
    "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
    "-device",
    "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot",
    "-nic",
    "none",
  ];
  return new Promise((settle) => {
    const t0 = Date.now();
    const child = spawn("qemu-system-x86_64", args, { stdio: ["ignore", "pipe", "pipe"] });
    const results = [];
    let text = "";
    let booted = null;
    let bootedWall = null;
    let end = null;
    let pending = "";
    const line = (raw) => {
      const full = raw.replace(/\r$/, "");
      text += `${full}\n`;
      // The kernel's console may prefix a line with escapes or an unfinished message.
      const at = full.indexOf("KTEST");
      const l = at > 0 ? full.slice(at) : full;
      if (l.startsWith("KTEST ")) {
        try {
          const r = JSON.parse(l.slice(6));
          results.push(r);
          const mark = r.status === "pass" ? "ok  " : r.status === "skip" ? "skip" : "FAIL";
          log(
            `${kernelName} ${mark} ${r.name} (${(r.ms / 1000).toFixed(1)} s)${r.why ? `: ${r.why}` : ""}`,
          );
        } catch {
          log(`${kernelName} unparsable: ${l}`);
        }
      } else if (l.startsWith("KTEST-BOOTED ")) {
        booted = Number(l.split(" ")[1]);
        bootedWall = (Date.now() - t0) / 1000;
        log(`${kernelName} booted: ${l.slice(13)} (wall ${bootedWall.toFixed(1)} s)`);
      } else if (l.startsWith("KTEST-END ")) {
        end = Number(l.split(" ")[1]);
      } else if (l.startsWith("KTEST-INIT ") || /Kernel panic|BUG:|Oops|Call Trace/.test(l)) {
        log(`${kernelName} guest: ${l}`);
      } else if (process.env["EXACTSPAWN_KERNELS_VERBOSE"]) {
        log(`${kernelName} | ${l}`);
      }
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const l of lines) line(l);
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      log(`${kernelName}: no end after ${timeout} s, qemu killed`);
      child.kill("SIGKILL");
    }, timeout * 1000);
    child.on("close", (status) => {
      clearTimeout(timer);
      if (pending) line(pending);
      settle({
        booted,
        bootedWall,
        wall: (Date.now() - t0) / 1000,
        results,
        end,
        status,
        log: text + stderr,
      });
    });
  });
}

function parseArgs(argv) {
  const options = {
    kernels: Object.keys(KERNELS),
    tree: root,
    timeout: 600,
    memory: 1024,
    only: null,
    mutants: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${arg} needs a value`);
      return v;
    };
    if (arg === "--kernel") options.kernels = value().split(",");
    else if (arg === "--tree") options.tree = resolve(value());
    else if (arg === "--timeout") options.timeout = Number(value());
    else if (arg === "--memory") options.memory = Number(value());
    else if (arg === "--only") options.only = value();
    else if (arg === "--mutant") options.mutants = value().split(",");
    else if (arg === "--mutants") options.mutants = Object.keys(KERNEL_MUTANTS);
    else usage(`unknown argument ${arg}`);
  }
  for (const m of options.mutants ?? []) if (!(m in KERNEL_MUTANTS)) usage(`no kernel mutant ${m}`);
  for (const k of options.kernels)
    if (!(k in KERNELS)) usage(`no kernel ${k} (${Object.keys(KERNELS).join(", ")})`);
  if (!Number.isFinite(options.timeout) || options.timeout <= 0) usage("--timeout needs seconds");
  return options;
}

function usage(message) {
  process.stderr.write(
    `kernels: ${message}\nusage: npm run test:kernels -- [--kernel 5.10,6.1,6.12] [--tree DIR] [--only CHECK,…] [--timeout SECONDS] [--memory MiB] [--mutant NAME,… | --mutants]\n`,
  );
  process.exit(2);
}

/** Boots each kernel in turn with the tree's checks: { failed, summary lines }. */
async function runTier(busybox, options) {
  const summary = [];
  const red = [];
  let failed = false;
  for (const name of options.kernels) {
    const kernel = kernelDir(name, busybox);
    const initrd = timed(`${name}: initramfs`, () => initramfs(kernel, busybox));
    log(`${name}: booting ${kernel.version} (${kernel.deb}), tree ${options.tree}`);
    const outcome = await boot(name, kernel, initrd, options);
    const count = (status) => outcome.results.filter((r) => r.status === status).length;
    const skipped = outcome.results.filter((r) => r.status === "skip").map((r) => r.name);
    const line = `${name} (${kernel.version}): boot ${outcome.booted ?? "-"} s guest uptime / ${outcome.bootedWall?.toFixed(1) ?? "-"} s wall; ${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped${skipped.length > 0 ? ` (${skipped.join(", ")})` : ""}; ${outcome.wall.toFixed(0)} s in all`;
    log(`${name}: ${outcome.wall.toFixed(1)} s`);
    summary.push(line);
    red.push(...outcome.results.filter((r) => r.status === "fail").map((r) => `${name} ${r.name}`));
    if (outcome.end !== 0 || count("fail") > 0 || outcome.results.length === 0) {
      failed = true;
      const logFile = join(tmpdir(), `exactspawn-kernels-${name}.log`);
      writeFileSync(logFile, outcome.log);
      log(
        `${name}: ${outcome.end === null ? "the guest did not finish" : `run.mjs exit ${outcome.end}`}; console log in ${logFile}`,
      );
    }
  }
  return { failed, summary, red };
}

/** A scratch copy of the tree (tracked and untracked files, its dist/ and build/), node_modules linked. */
function scratchTree(tree) {
  // Not under /tmp (the guest mounts a tmpfs of its own there).
  const dir = mkdtempSync("/var/tmp/exactspawn-kernel-mutant-");
  copyTreeFiles(tree, dir);
  for (const built of ["dist", "build"]) {
    if (existsSync(join(tree, built))) {
      cpSync(join(tree, built), join(dir, built), { recursive: true, preserveTimestamps: true });
    }
  }
  symlinkSync(join(tree, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** Applies a kernel mutant to a scratch tree and builds what it changed; nothing is left on failure. */
function mutatedTree(name, tree) {
  const dir = scratchTree(tree);
  try {
    applyAndBuild(name, dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return dir;
}

function applyAndBuild(name, dir) {
  const mutant = KERNEL_MUTANTS[name];
  for (const { file, search, replace } of mutant.edits) {
    const text = readFileSync(join(dir, file), "utf8");
    const at = text.indexOf(search);
    if (at < 0 || text.indexOf(search, at + 1) >= 0) {
      throw new Error(`mutant ${name}: the search text is not found exactly once in ${file}`);
    }
    writeFileSync(join(dir, file), text.slice(0, at) + replace + text.slice(at + search.length));
  }
  const files = mutant.edits.map((edit) => edit.file);
  if (files.some((file) => file.startsWith("native/"))) {
    const gyp = join(dir, "node_modules", ".bin", "node-gyp");
    // The copied build/ rebuilds only what changed, but its Makefile reaches the Node headers by
    // a path relative to the tree it was configured in: from a tree of another depth it cannot
    // build, and the copy is configured and built anew (about a minute).
    const rebuilt = () =>
      timed(`${name}: node-gyp rebuild`, () => run(gyp, ["rebuild"], { cwd: dir }));
    if (!existsSync(join(dir, "build"))) rebuilt();
    else {
      try {
        timed(`${name}: node-gyp build`, () => run(gyp, ["build"], { cwd: dir }));
      } catch (error) {
        log(`${name}: the copied build/ does not build here (${error.message.split("\n")[0]})`);
        rebuilt();
      }
    }
  }
  if (files.some((file) => file.startsWith("src/"))) {
    timed(`${name}: npm run compile`, () => run("npm", ["run", "compile"], { cwd: dir }));
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const { busybox } = ensureTools();
  if (!existsSync(join(options.tree, "dist", "index.js"))) {
    throw new Error(`${options.tree}/dist/index.js is missing: npm run compile first`);
  }
  if (options.mutants === null) {
    const { failed, summary } = await runTier(busybox, options);
    for (const line of summary) log(line);
    log(`all kernels: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    process.exit(failed ? 1 : 0);
  }
  // Mutants: each must turn a check red on one of its kernels.
  const verdicts = [];
  for (const name of options.mutants) {
    const mutant = KERNEL_MUTANTS[name];
    const t0 = Date.now();
    const dir = mutatedTree(name, options.tree);
    try {
      const kernels = options.kernels.filter((k) => mutant.kernels.includes(k));
      const { red } = await runTier(busybox, {
        ...options,
        tree: dir,
        kernels: kernels.length > 0 ? kernels : mutant.kernels,
        only: mutant.checks.join(","),
      });
      // Killed only by a check that ran and failed (a guest that did not boot proves nothing).
      const failed = red.length > 0;
      const verdict = `${name}: ${failed ? `killed (red: ${red.join(", ")})` : "SURVIVED (green, or no check ran)"} on ${mutant.kernels.join(", ")}, checks ${mutant.checks.join(", ")}; ${((Date.now() - t0) / 1000).toFixed(0)} s`;
      log(verdict);
      verdicts.push({ failed, verdict });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  for (const { verdict } of verdicts) log(verdict);
  log(`all mutants: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  process.exit(verdicts.every((v) => v.failed) ? 0 : 1);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    process.stderr.write(`kernels: ${error.message}\n`);
    process.exit(1);
  });
}
