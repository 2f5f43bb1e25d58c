/**
 * The sandbox played as an escapee: every attempt runs in a real sandboxed
 * bash (or Python, curl) and the verdict comes from outside — the file system
 * as the test sees it afterwards, a loopback server that counts connections —
 * never from what the library meant to apply. Native engine only; the
 * fallback must refuse (last block).
 *
 * Controls seen red once each by removing them: the Landlock ruleset (every
 * write outside succeeded), the seccomp filter (UDP, Python TCP and io_uring
 * got through; bash's /dev/tcp was still stopped by Landlock's TCP rule), the
 * REFER/hard-link rule (the link was made and written through).
 */
import {
  copyFileSync,
  existsSync as exists,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRuntime,
  nativeStatus,
  SandboxError,
  type SandboxOptions,
  sandboxSupport,
  spawn,
  spawnSync,
} from "../../src/index.js";

const native = nativeStatus().loaded;
const support = sandboxSupport();
const full = native && support.missing.length === 0;

const root = mkdtempSync(join(tmpdir(), "exactspawn-sandbox-"));
const inside = join(root, "inside");
const outside = join(root, "outside");
const secret = join(outside, "secret.txt");
mkdirSync(inside);
mkdirSync(outside);
writeFileSync(secret, "intact");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const PATH = "/usr/local/bin:/usr/bin:/bin";
// Landlock alone: where the read-only mount view is made, it answers EROFS
// before Landlock is asked (sandbox-mount-view.test.ts tests the view).
const box: SandboxOptions = { writable: [inside], readOnlyView: false };

async function bash(script: string, sandbox: SandboxOptions = box) {
  return spawn("/bin/bash", ["-c", script], {
    env: { PATH, ROOT: root, IN: inside, OUT: outside },
    sandbox,
    reject: false,
  });
}

describe.runIf(full)("sandbox: the file system (Landlock)", () => {
  it("writes inside, and nowhere else", async () => {
    const result = await bash('echo ok > "$IN/a" && echo x > "$OUT/b"');
    expect(readFileSync(join(inside, "a"), "utf8")).toBe("ok\n");
    expect(exists(join(outside, "b"))).toBe(false);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("Permission denied");
  });

  it("a symlink inside pointing outside does not open a way out", async () => {
    await bash('ln -s "$OUT" "$IN/link"; echo x > "$IN/link/through-symlink"');
    expect(exists(join(outside, "through-symlink"))).toBe(false);
  });

  it("'..' does not climb out", async () => {
    await bash('echo x > "$IN/../outside/through-dots"');
    expect(exists(join(outside, "through-dots"))).toBe(false);
  });

  it("a hard link into the writable directory cannot be written through", async () => {
    await bash('ln "$OUT/secret.txt" "$IN/hard"; echo pwned >> "$IN/hard"');
    expect(readFileSync(secret, "utf8")).toBe("intact");
    expect(statSync(secret).nlink).toBe(1); // the link itself was refused (EXDEV)
  });

  it("rename cannot move a file out", async () => {
    writeFileSync(join(inside, "movable"), "m");
    await bash('mv "$IN/movable" "$OUT/moved"');
    expect(exists(join(outside, "moved"))).toBe(false);
    expect(exists(join(inside, "movable"))).toBe(true);
  });

  it("truncation and removal outside fail", async () => {
    await bash('truncate -s 0 "$OUT/secret.txt"; : > "$OUT/secret.txt"; rm -f "$OUT/secret.txt"');
    expect(readFileSync(secret, "utf8")).toBe("intact");
  });

  it("binds a grandchild that starts a new session, and survives exec chains", async () => {
    await bash(
      'setsid /bin/sh -c "echo x > $OUT/from-setsid"; ' +
        'exec /bin/bash -c "exec /bin/sh -c \\"echo x > $OUT/from-exec\\""',
    );
    expect(exists(join(outside, "from-setsid"))).toBe(false);
    expect(exists(join(outside, "from-exec"))).toBe(false);
  });

  it("does not execute files from writable directories unless asked", async () => {
    copyFileSync("/bin/true", join(inside, "mytrue"));
    const refused = await bash('"$IN/mytrue"');
    expect(refused.exitCode).toBe(126);
    const allowed = await bash('"$IN/mytrue"', { ...box, executeWritable: true });
    expect(allowed.exitCode).toBe(0);
  });

  it("reads everywhere by default, and only the listed places otherwise", async () => {
    const all = await bash('cat "$OUT/secret.txt"');
    expect(all.stdout).toBe("intact");
    const listed = await bash('cat "$OUT/secret.txt"', { ...box, readable: [inside] });
    expect(listed.stdout).toBe("");
    expect(listed.stderr).toContain("Permission denied");
  });

  it("cannot signal processes outside its sandbox (the host)", async () => {
    const result = await bash(`kill -0 ${process.pid} && echo reached`);
    expect(result.stdout).toBe("");
  });

  it("spawnSync applies the same sandbox", () => {
    const result = spawnSync("/bin/bash", ["-c", `echo x > ${outside}/from-sync`], {
      sandbox: box,
      reject: false,
    });
    expect(result.exitCode).not.toBe(0);
    expect(exists(join(outside, "from-sync"))).toBe(false);
  });
});

describe.runIf(full)("sandbox: a runtime-wide default", () => {
  it("confines runtime.bash and runtime.spawn; a call's own sandbox replaces it", async () => {
    const runtime = createRuntime({ parentEnv: { PATH }, sandbox: box });
    await runtime.bash(`echo x > ${outside}/from-bash`, { reject: false });
    await runtime.spawn("/bin/sh", ["-c", `echo x > ${outside}/from-spawn`], { reject: false });
    expect(exists(join(outside, "from-bash"))).toBe(false);
    expect(exists(join(outside, "from-spawn"))).toBe(false);
    await runtime.bash(`echo x > ${outside}/own-box`, { sandbox: { writable: [outside] } });
    expect(exists(join(outside, "own-box"))).toBe(true);
  });
});

describe.runIf(full)("sandbox: the network (seccomp and Landlock)", () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const python = (code: string) => bash(`/usr/bin/python3 -c '${code}'`);

  it("refuses TCP from bash, Python and curl, and UDP; loopback sees nothing", async () => {
    const tcp = await bash(`exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`);
    expect(tcp.stdout).toBe("");
    const py = await python(
      `import socket; socket.create_connection(("127.0.0.1", ${port})); print("connected")`,
    );
    expect(py.stdout).toBe("");
    expect(py.stderr).toContain("PermissionError");
    const udp = await python(
      'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print("udp")',
    );
    expect(udp.stdout).toBe("");
    const curl = await bash(`/usr/bin/curl -s -m 5 http://127.0.0.1:${port}/ && echo fetched`);
    expect(curl.stdout).toBe("");
    expect(connections).toBe(0);
  });

  it("refuses io_uring (whose socket operation would bypass the filter)", async () => {
    const code =
      "import ctypes; libc = ctypes.CDLL(None, use_errno=True); " +
      "p = ctypes.create_string_buffer(120); print(libc.syscall(425, 4, p), ctypes.get_errno())";
    const boxed = await python(code);
    expect(boxed.stdout).toBe("-1 1\n"); // EPERM
  });

  it("keeps AF_UNIX sockets working", async () => {
    const result = await python(
      'import socket; a, b = socket.socketpair(); a.send(b"unix"); print(b.recv(4).decode()); ' +
        'socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); print("ok")',
    );
    expect(result.stdout).toBe("unix\nok\n");
  });

  it("network: true lets the child connect", async () => {
    const result = await bash(`exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`, {
      ...box,
      network: true,
    });
    expect(result.stdout).toBe("connected\n");
  });
});

describe.runIf(!native)("sandbox on the fallback engine", () => {
  it("is refused, never dropped", async () => {
    const error = await spawn("/bin/true", [], { sandbox: box }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SandboxError);
    expect(() => spawnSync("/bin/true", [], { sandbox: box })).toThrow(SandboxError);
  });
});
