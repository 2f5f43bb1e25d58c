import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createDenylist,
  isReservedName,
  isUnsafeValue,
  RESERVED_ENV_DENYLIST,
  RESERVED_ENV_PREFIXES,
  RESERVED_ENV_SUFFIXES,
  SEED_RESERVED_ENV_NAMES,
} from "../../src/env/denylist.js";

const SEED_22 = [
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "DYLD_INSERT_LIBRARIES",
  "DYLD_LIBRARY_PATH",
  "GLIBC_TUNABLES",
  "BASH_ENV",
  "ENV",
  "PS4",
  "PROMPT_COMMAND",
  "SHELLOPTS",
  "BASHOPTS",
  "IFS",
  "PATH",
  "HOME",
  "SHELL",
  "PWD",
  "USER",
  "LOGNAME",
  "PYTHONPATH",
  "NODE_OPTIONS",
  "PERL5OPT",
  "RUBYOPT",
];

describe("RESERVED_ENV_DENYLIST", () => {
  it("contains the seed's 22 names", () => {
    expect(SEED_RESERVED_ENV_NAMES).toEqual(SEED_22);
    for (const name of SEED_22) expect(RESERVED_ENV_DENYLIST).toContain(name);
  });

  it("is frozen, as are the prefix and suffix lists", () => {
    expect(Object.isFrozen(RESERVED_ENV_DENYLIST)).toBe(true);
    expect(Object.isFrozen(RESERVED_ENV_PREFIXES)).toBe(true);
    expect(Object.isFrozen(RESERVED_ENV_SUFFIXES)).toBe(true);
  });

  it("holds only upper-case identifiers, without duplicates", () => {
    for (const list of [RESERVED_ENV_DENYLIST, RESERVED_ENV_PREFIXES, RESERVED_ENV_SUFFIXES]) {
      expect(new Set(list).size).toBe(list.length);
      for (const entry of list) expect(entry).toMatch(/^[A-Z0-9_]+$/);
    }
  });

  it("reserves every exact name it lists", () => {
    for (const name of RESERVED_ENV_DENYLIST) expect(isReservedName(name), name).toBe(true);
  });
});

describe("isReservedName", () => {
  // One example per family, with what it would make a program do (see docs/denylist.md).
  const reserved: [name: string, why: string][] = [
    ["LD_PRELOAD", "loader injects a library"],
    ["LD_AUDIT", "LD_ prefix: loader audit library"],
    ["DYLD_FALLBACK_LIBRARY_PATH", "DYLD_ prefix"],
    ["GCONV_PATH", "iconv loads modules from a path"],
    ["GCONV_CACHE", "GCONV_ prefix"],
    ["LOCPATH", "locale data from a path"],
    ["NLSPATH", "message catalogs from a path"],
    ["HOSTALIASES", "resolver alias file"],
    ["RESOLV_HOST_CONF", "resolver config file"],
    ["MALLOC_CHECK_", "MALLOC_ prefix"],
    ["CDPATH", "cd resolves elsewhere"],
    ["EDITOR", "programs launch it"],
    ["VISUAL", "programs launch it"],
    ["GIT_EDITOR", "EDITOR suffix"],
    ["BROWSER", "programs launch it"],
    ["CC", "compiler choice"],
    ["CXX", "compiler choice"],
    ["MAKEFLAGS", "MAKE prefix / FLAGS suffix"],
    ["MAKEFILES", "make reads extra makefiles"],
    ["TMPDIR", "temporary files elsewhere"],
    ["PERL5LIB", "perl module path"],
    ["PERL5DB", "PERL prefix: debugger code"],
    ["RUBYLIB", "ruby load path"],
    ["NODE_PATH", "node module path"],
    ["NODE_EXTRA_CA_CERTS", "NODE_ prefix"],
    ["GIT_SSH_COMMAND", "GIT_ prefix: command git runs"],
    ["GIT_CONFIG_GLOBAL", "GIT_ prefix"],
    ["NPM_CONFIG_REGISTRY", "NPM_CONFIG_ prefix"],
    ["PYTHONSTARTUP", "PYTHON prefix"],
    ["PYTHONHOME", "PYTHON prefix"],
    ["JAVA_TOOL_OPTIONS", "JAVA_ prefix"],
    ["_JAVA_OPTIONS", "_OPTIONS suffix"],
    ["JDK_JAVA_OPTIONS", "_OPTIONS suffix"],
    ["SSH_AUTH_SOCK", "SSH_ prefix"],
    ["SSH_ASKPASS", "SSH_ prefix / ASKPASS suffix"],
    ["OPENSSL_CONF", "OPENSSL_ prefix"],
    ["PIP_INDEX_URL", "PIP_ prefix"],
    ["CARGO_HOME", "CARGO_ prefix"],
    ["RUSTC_WRAPPER", "RUSTC prefix"],
    ["RUSTFLAGS", "FLAGS suffix"],
    ["BASH_FUNC_X", "BASH prefix"],
    ["BASH_LOADABLES_PATH", "BASH prefix"],
    ["HTTP_PROXY", "PROXY suffix"],
    ["HTTPS_PROXY", "PROXY suffix"],
    ["NO_PROXY", "PROXY suffix"],
    ["GOPROXY", "PROXY suffix"],
    ["PAGER", "PAGER suffix"],
    ["MANPAGER", "PAGER suffix"],
    ["GIT_ASKPASS", "ASKPASS suffix"],
    ["SUDO_ASKPASS", "ASKPASS suffix"],
    ["CFLAGS", "FLAGS suffix"],
    ["LDFLAGS", "FLAGS suffix"],
    ["MAVEN_OPTS", "_OPTS suffix"],
    ["GRADLE_OPTS", "_OPTS suffix"],
    ["CPLUS_INCLUDE_PATH", "_INCLUDE_PATH suffix"],
    ["LIBRARY_PATH", "LIBRARY_PATH suffix"],
    ["LESSOPEN", "LESS prefix: command less runs"],
    ["XDG_CONFIG_HOME", "XDG_ prefix"],
    ["AWS_CONFIG_FILE", "AWS_ prefix"],
    ["DOCKER_HOST", "DOCKER_ prefix"],
    ["DOTNET_STARTUP_HOOKS", "DOTNET_ prefix"],
    ["LUA_INIT", "LUA_ prefix"],
    ["KUBECONFIG", "exec plugins"],
    ["GOTOOLCHAIN", "downloads and runs a toolchain"],
    ["EXACTSPAWN_RUN_ID", "host prefix"],
    ["EXACTSPAWN_ANYTHING", "host prefix"],
    ["RECIPE_VAR_X", "step prefix"],
  ];
  it.each(reserved)("%s is reserved (%s)", (name) => {
    expect(isReservedName(name)).toBe(true);
  });

  it.each(["ld_preload", "Path", "git_dir", "http_proxy", "exactspawn_run_id"])(
    "%s is reserved after ASCII upper-casing",
    (name) => {
      expect(isReservedName(name)).toBe(true);
    },
  );

  const free = [
    "TASK_DESCRIPTION",
    "REPO_PATH",
    "ISSUE_NUMBER",
    "BRANCH_NAME",
    "TARGET_PATH",
    "TASK_TYPE",
    "WORKSTREAM_COUNT",
    "NOTES",
    "ISSUE_TITLE",
    "LANG",
    "LC_ALL",
    "TZ",
    "CTX_LD_PRELOAD",
  ];
  it.each(free)("%s is not reserved", (name) => {
    expect(isReservedName(name)).toBe(false);
  });

  it("follows a configured host prefix", () => {
    expect(isReservedName("ACME_TOKEN", { hostPrefix: "ACME_" })).toBe(true);
    expect(isReservedName("EXACTSPAWN_X", { hostPrefix: "ACME_" })).toBe(false);
  });

  it("lets hosts add names, prefixes and suffixes, never remove the core", () => {
    const denylist = createDenylist({
      names: ["deploy_key"],
      prefixes: ["VAULT_"],
      suffixes: ["_TOKEN"],
    });
    expect(isReservedName("DEPLOY_KEY", denylist)).toBe(true);
    expect(isReservedName("VAULT_ADDR", denylist)).toBe(true);
    expect(isReservedName("GITHUB_TOKEN", denylist)).toBe(true);
    expect(isReservedName("LD_PRELOAD", denylist)).toBe(true);
    expect(() => (denylist.names as Set<string>).delete("LD_PRELOAD")).toThrow(TypeError);
    expect(isReservedName("LD_PRELOAD", denylist)).toBe(true);
  });

  it.each([
    [{ names: "X" }, "denylist.names must be an array"],
    [{ names: [""] }, "denylist.names[0] must be a non-empty string"],
    [{ prefixes: ["A=B"] }, "denylist.prefixes[0] must not contain"],
    [{ suffixes: [7] }, "denylist.suffixes[0] must be a non-empty string"],
  ])("rejects malformed additions %j", (options, message) => {
    expect(() => createDenylist(options as never)).toThrow(message);
  });
});

describe("isUnsafeValue", () => {
  it.each([
    ["NOTES", "() { :; }; echo pwned", true],
    ["NOTES", "(){ :;}", true],
    ["NOTES", "()  {", true],
    ["NOTES", " () {", false],
    ["NOTES", "a/b", false],
    ["LANG", "en_US.UTF-8", false],
    ["LANG", "../../tmp/evil", true],
    ["LANGUAGE", "en/x", true],
    ["LC_ALL", "/tmp/locale", true],
    ["LC_MESSAGES", "C", false],
    ["TZ", "UTC", false],
    ["TZ", "/etc/passwd", true],
    ["TZ", "Europe/Paris", true],
  ])("%s=%j unsafe: %s", (name, value, unsafe) => {
    expect(isUnsafeValue(name, value)).toBe(unsafe);
  });
});

describe("matching", () => {
  it("agrees with a plain loop over the lists (property)", () => {
    const denylist = createDenylist({ prefixes: ["A.B"], suffixes: ["$X"] });
    const naive = (name: string) =>
      denylist.names.has(name) ||
      denylist.prefixes.some((p) => name.startsWith(p)) ||
      denylist.suffixes.some((s) => name.endsWith(s));
    const name = fc.oneof(
      fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,14}$/),
      fc.constantFrom(...RESERVED_ENV_PREFIXES).chain((p) => fc.string().map((rest) => p + rest)),
      fc.constantFrom(...RESERVED_ENV_SUFFIXES).chain((s) => fc.string().map((rest) => rest + s)),
      fc.constantFrom("A.BC", "AXB", "Y$X", "YX"),
    );
    fc.assert(
      fc.property(name, (n) => {
        expect(isReservedName(n, denylist)).toBe(
          naive(n.replace(/[a-z]/g, (c) => c.toUpperCase())),
        );
      }),
      { numRuns: 3000 },
    );
  });
});
