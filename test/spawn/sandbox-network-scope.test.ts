/**
 * The network parts the socket filter cannot see, from real children
 * (issue 27, item 9: no test passed a TCP socket or connected to an
 * abstract one):
 * - Landlock's TCP rules (ABI 4): a TCP socket the child inherited, made
 *   before the sandbox so the filter's socket rule never saw it, can neither
 *   `connect` nor `bind` (EACCES). The sockets are made by a small Python
 *   wrapper that then execs the Node host, since Node cannot hand out an
 *   unconnected TCP socket;
 * - Landlock's abstract UNIX socket scoping (ABI 6): the host listens on an
 *   abstract socket, the sandboxed child's `connect` is refused (EPERM).
 * The oracle for each is the same child with `network: true`.
 *
 * Seen red with `npm run test:mutants -- --only landlock-tcp` and
 * `--only landlock-abstract-unix-scope`.
 */

import { spawnSync as nodeSpawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, sandboxSupport, spawn } from "../../src/index.js";
import { PACKAGE_ROOT } from "../../src/native.js";

const PYTHON = "/usr/bin/python3";
const support = nativeStatus().loaded ? sandboxSupport() : undefined;
const usable = support !== undefined && support.missing.length === 0 && existsSync(PYTHON);
const tcpRules = usable && support.landlockAbi >= 4;
const scoped = usable && support.landlockAbi >= 6;

describe.runIf(tcpRules)("sandbox: an inherited TCP socket", () => {
  // The host: a TCP listener of its own, and a sandboxed Python that uses the
  // inherited sockets (its fds 3 and 4, the wrapper's 10 and 11).
  const host = (network: boolean) => `
    import { createServer } from "node:net";
    const { spawn } = await import(${JSON.stringify(join(PACKAGE_ROOT, "dist", "index.js"))});
    const server = createServer((socket) => socket.destroy());
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const code = [
      "import json, socket, sys",
      "def attempt(f):",
      "    try:",
      "        f()",
      "        return 0",
      "    except OSError as e:",
      "        return e.errno",
      "c = socket.socket(fileno=3)",
      "b = socket.socket(fileno=4)",
      "print(json.dumps({'connect': attempt(lambda: c.connect(('127.0.0.1', int(sys.argv[1])))),",
      "                  'bind': attempt(lambda: b.bind(('127.0.0.1', 0)))}))",
    ].join("\\n");
    const port = server.address().port;
    const child = await spawn(${JSON.stringify(PYTHON)}, ["-c", code, String(port)], {
      stdio: ["ignore", "pipe", "pipe", 10, 11],
      sandbox: { writable: [], network: ${network} },
      reject: false,
    });
    server.close();
    process.stdout.write(String(child.stdout));
    process.stderr.write(String(child.stderr));`;

  function run(network: boolean): { connect: number; bind: number } {
    const wrapper = [
      "import os, socket, sys",
      "for fd in (10, 11):",
      "    s = socket.socket()",
      "    os.dup2(s.fileno(), fd)",
      "    s.close()",
      "os.execv(sys.argv[1], sys.argv[1:])",
    ].join("\n");
    const result = nodeSpawnSync(
      PYTHON,
      ["-c", wrapper, process.execPath, "--input-type=module", "-e", host(network)],
      { encoding: "utf8" },
    );
    expect(result.stderr).toBe("");
    return JSON.parse(result.stdout) as { connect: number; bind: number };
  }

  it("can neither connect nor bind it (EACCES)", () => {
    expect(run(false)).toEqual({ connect: 13, bind: 13 });
  });

  it("the oracle: with network: true the same child connects and binds", () => {
    expect(run(true)).toEqual({ connect: 0, bind: 0 });
  });
});

describe.runIf(scoped)("sandbox: an abstract UNIX socket of the host", () => {
  const name = `exactspawn-scope-${randomBytes(6).toString("hex")}`;
  let server: Server;
  beforeAll(async () => {
    server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(`\0${name}`, resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connect = async (network: boolean) => {
    // Node 20 binds the name padded with NULs to the whole sun_path (108
    // bytes), later versions may not: try the exact name, then the padded one.
    const code = [
      "import errno, socket, sys",
      "name = '\\0' + sys.argv[1]",
      "result = errno.ECONNREFUSED",
      "for address in (name, name.ljust(108, '\\0')):",
      "    s = socket.socket(socket.AF_UNIX)",
      "    try:",
      "        s.connect(address)",
      "        result = 0",
      "    except OSError as e:",
      "        result = e.errno",
      "    if result != errno.ECONNREFUSED:",
      "        break",
      "print(result)",
    ].join("\n");
    const child = await spawn(PYTHON, ["-c", code, name], { sandbox: { writable: [], network } });
    return String(child.stdout).trim();
  };

  it("cannot connect to it (EPERM)", async () => {
    expect(await connect(false)).toBe("1");
  });

  it("the oracle: with network: true the same child connects", async () => {
    expect(await connect(true)).toBe("0");
  });
});
