/**
 * Issue 29 item 1: a runtime hands its steps the essentials and what the
 * host names, never the host's own secrets, unless the host asks for the
 * whole parent environment (`inherit: "all"`). Checked on what the real
 * child received (`env` in the step, /proc/self/environ of a spawned child).
 */
import { describe, expect, it } from "vitest";
import { createRuntime } from "../src/runtime.js";
import { captureLog } from "./helpers/capture-log.js";
import { cli } from "./helpers/run-cli.js";

const SECRETS = [
  "HOST_SECRET_TOKEN",
  "AWS_SECRET_ACCESS_KEY",
  "GITHUB_TOKEN",
  "DATABASE_URL",
  "NPM_TOKEN",
  "OPENAI_API_KEY",
  "MY_SERVICE_PASSWORD",
] as const;

const secretEnv: Record<string, string> = Object.fromEntries(
  SECRETS.map((name) => [name, `secret-of-${name}`]),
);
const parentEnv: Record<string, string> = {
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  HOME: "/home/agent",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  XDG_RUNTIME_DIR: "/run/user/1000",
  TMPDIR: process.env["TMPDIR"] ?? "/tmp",
  EDITOR: "vi",
  ...secretEnv,
};

/** The names in `env -0`-style output `NAME=value\0…`. */
function names(environ: string): string[] {
  return environ
    .split("\0")
    .filter((entry) => entry !== "")
    .map((entry) => entry.slice(0, entry.indexOf("=")));
}

describe("a runtime's steps inherit the essentials only by default", () => {
  it("runtime.bash: none of the host's secrets reach the step; the essentials do", async () => {
    const runtime = createRuntime({ parentEnv, logger: captureLog().logger });
    const result = await runtime.bash("env -0");
    const seen = names(result.stdout);
    for (const secret of SECRETS) expect(seen).not.toContain(secret);
    expect(seen).not.toContain("EDITOR");
    for (const essential of ["PATH", "HOME", "LANG", "LC_ALL", "XDG_RUNTIME_DIR", "TMPDIR"]) {
      expect(seen).toContain(essential);
    }
    // What was left out is said, by name and reason (never a value).
    const dropped = result.dropped.filter((d) => d.reason === "not_allowed").map((d) => d.name);
    expect(dropped.sort()).toEqual([...SECRETS, "EDITOR"].sort());
    expect(JSON.stringify(result.dropped)).not.toContain("secret-of-");
  });

  it("runtime.spawn: the child's /proc/self/environ holds no secret", async () => {
    const runtime = createRuntime({ parentEnv, logger: captureLog().logger });
    const result = await runtime.spawn("cat", ["/proc/self/environ"]);
    const seen = names(result.stdout);
    for (const secret of SECRETS) expect(seen).not.toContain(secret);
    expect(seen).toContain("PATH");
  });

  it("a name the host lists in allow (or grants) is inherited", async () => {
    const runtime = createRuntime({
      parentEnv,
      allow: ["EDITOR"],
      grants: ["GITHUB_TOKEN"],
      logger: captureLog().logger,
    });
    const seen = names((await runtime.bash("env -0")).stdout);
    expect(seen).toContain("EDITOR");
    expect(seen).toContain("GITHUB_TOKEN");
    expect(seen).not.toContain("NPM_TOKEN");
  });

  it('inherit: "all" reproduces the whole parent environment, block and allow as before', async () => {
    const all = createRuntime({ parentEnv, inherit: "all", logger: captureLog().logger });
    const seen = names((await all.bash("env -0")).stdout);
    for (const secret of SECRETS) expect(seen).toContain(secret);
    expect(seen).toContain("EDITOR");
    const blocked = createRuntime({
      parentEnv,
      inherit: "all",
      block: ["NPM_TOKEN"],
      logger: captureLog().logger,
    });
    const seenBlocked = names((await blocked.bash("env -0")).stdout);
    expect(seenBlocked).not.toContain("NPM_TOKEN");
    expect(seenBlocked).toContain("GITHUB_TOKEN");
    const allowed = createRuntime({
      parentEnv,
      inherit: "all",
      allow: ["EDITOR"],
      logger: captureLog().logger,
    });
    const seenAllowed = names((await allowed.bash("env -0")).stdout);
    expect(seenAllowed).toContain("EDITOR");
    expect(seenAllowed).not.toContain("GITHUB_TOKEN");
  });

  it("the recipe-runner-compat preset inherits everything, as the runtime document does", () => {
    const runtime = createRuntime({
      parentEnv,
      preset: "recipe-runner-compat",
      logger: captureLog().logger,
    });
    expect(runtime.config.inherit).toBe("all");
    expect(runtime.buildEnv().env.has("GITHUB_TOKEN")).toBe(true);
  });

  it("rejects an unknown inherit value naming the option", () => {
    expect(() => createRuntime({ parentEnv, inherit: "everything" as never })).toThrow(
      /inherit must be "essentials" or "all"/,
    );
  });

  it("says once per runtime, through its logger, what the curated default left out", async () => {
    const log = captureLog();
    const runtime = createRuntime({ parentEnv, logger: log.logger });
    await runtime.bash("true");
    await runtime.bash("true");
    await runtime.spawn("true");
    const notices = log.events().filter((e) => e["event"] === "inherit.curated");
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ level: 40, notInherited: SECRETS.length + 1 });
    expect(notices[0]?.["names"]).toEqual([...SECRETS, "EDITOR"].sort());
    expect(log.lines.join("\n")).not.toContain("secret-of-");
    // A root host is told that its own environment stays readable to its steps.
    const root = process.geteuid?.() === 0;
    expect(notices[0]?.["rootHost"]).toBe(root ? true : undefined);
    if (root) expect(String(notices[0]?.["msg"])).toMatch(/uid or sandbox/);
    // A host that chose its environment gets no notice.
    const chosen = captureLog();
    await createRuntime({ parentEnv, inherit: "essentials", logger: chosen.logger }).bash("true");
    expect(chosen.events().filter((e) => e["event"] === "inherit.curated")).toHaveLength(0);
  });
});

describe("exactspawn run / explain follow the same default", () => {
  const env = { ...process.env, ...secretEnv };

  it("run: no secret reaches the step; --inherit all passes them", () => {
    const curated = cli(["run", "--", "env -0"], { env });
    expect(curated.status).toBe(0);
    const seen = names(curated.stdout);
    for (const secret of SECRETS) expect(seen).not.toContain(secret);
    expect(seen).toContain("PATH");
    const all = cli(["run", "--inherit", "all", "--", "env -0"], { env });
    expect(all.status).toBe(0);
    for (const secret of SECRETS) expect(names(all.stdout)).toContain(secret);
  });

  it("explain: the secrets are listed as dropped (not_allowed)", () => {
    const explained = cli(["explain", "--json"], { env });
    expect(explained.status).toBe(0);
    const report = JSON.parse(explained.stdout) as {
      variables: { name: string; fate: string; reason: string | null }[];
    };
    for (const secret of SECRETS) {
      expect(report.variables.find((v) => v.name === secret)).toMatchObject({
        fate: "dropped",
        reason: "not_allowed",
      });
    }
  });
});
