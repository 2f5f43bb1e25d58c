/**
 * The reserved-name denylist for untrusted environment layers (exported
 * context, step values) and the value checks that go with it.
 *
 * A list of exact names cannot be complete: whole families of variables are
 * read as configuration (GNU make imports every variable; git, npm, pip,
 * cargo, the JVM, Python and the dynamic loader read whole prefixes). So the
 * denylist holds three kinds of entry — exact names, prefixes and suffixes —
 * all matched against the ASCII upper-cased name. docs/denylist.md says why
 * each entry is here. Hosts may add entries; the core cannot be removed.
 *
 * Pure; no I/O.
 */
import { asciiUpper, validateNameList } from "./names.js";

/** The host's own prefix by default (names the environment builder owns). */
export const DEFAULT_HOST_PREFIX = "EXACTSPAWN_";
/** The step-value prefix by default (names only the step-value layer may set). */
export const DEFAULT_STEP_PREFIX = "RECIPE_VAR_";

/** The 22 names the context-export seed reserves, kept verbatim as the base. */
const SEED_RESERVED_NAMES = [
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
] as const;

/** Exact names added beyond the seed; grouped as in docs/denylist.md. */
const WIDENED_RESERVED_NAMES = [
  // shell startup, parsing and identity
  "PS1",
  "PS2",
  "PS3",
  "CDPATH",
  "GLOBIGNORE",
  "POSIXLY_CORRECT",
  "HISTFILE",
  "INPUTRC",
  "MAILPATH",
  "TMOUT",
  "ZDOTDIR",
  "FPATH",
  "OLDPWD",
  // C library: loader, iconv, locale files, resolver, allocator, time zones
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "RESOLV_HOST_CONF",
  "RES_OPTIONS",
  "LOCALDOMAIN",
  "TZDIR",
  "TERMINFO",
  "TERMINFO_DIRS",
  // temporary files (spill files and scripts are written under TMPDIR)
  "TMPDIR",
  "TMP",
  "TEMP",
  // programs other programs launch
  "EDITOR",
  "VISUAL",
  "BROWSER",
  // build tools and compilers
  "CC",
  "CXX",
  "CPP",
  "LD",
  "AR",
  "AS",
  "NM",
  "RANLIB",
  "STRIP",
  "OBJCOPY",
  "OBJDUMP",
  "FC",
  "F77",
  "LIBS",
  "CPATH",
  "COMPILER_PATH",
  "GCC_EXEC_PREFIX",
  // interpreters and package managers
  "PERL5LIB",
  "PERLLIB",
  "RUBYLIB",
  "NODE_PATH",
  "CLASSPATH",
  "VIRTUAL_ENV",
  "PHPRC",
  "PHP_INI_SCAN_DIR",
  "TCLLIBPATH",
  "GOROOT",
  "GOPATH",
  "GOBIN",
  "GOENV",
  "GOTOOLCHAIN",
  "GOINSECURE",
  "GOPRIVATE",
  "GONOPROXY",
  "GONOSUMDB",
  "GOSUMDB",
  "GOCACHE",
  "GOEXPERIMENT",
  "GODEBUG",
  // TLS trust, credentials and remote endpoints
  "CURL_CA_BUNDLE",
  "REQUESTS_CA_BUNDLE",
  "CURL_HOME",
  "WGETRC",
  "GNUPGHOME",
  "KUBECONFIG",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "XAUTHORITY",
] as const;

/**
 * The frozen core of exact reserved names: the seed's 22 names plus the
 * widened set. Prefix and suffix families are in RESERVED_ENV_PREFIXES and
 * RESERVED_ENV_SUFFIXES; the host and step prefixes are added per policy.
 */
export const RESERVED_ENV_DENYLIST: readonly string[] = Object.freeze([
  ...SEED_RESERVED_NAMES,
  ...WIDENED_RESERVED_NAMES,
]);

/** The seed's own 22 names (a subset of RESERVED_ENV_DENYLIST), for presets and tests. */
export const SEED_RESERVED_ENV_NAMES: readonly string[] = Object.freeze([...SEED_RESERVED_NAMES]);

/** Prefix families: any name starting with one of these is reserved. */
export const RESERVED_ENV_PREFIXES: readonly string[] = Object.freeze([
  "LD_",
  "DYLD_",
  "GCONV_",
  "MALLOC_",
  "BASH",
  "BASH_FUNC_",
  "PROMPT_",
  "LESS",
  "XDG_",
  "DBUS_",
  "GIT_",
  "SSH_",
  "OPENSSL_",
  "SSL_",
  "KRB5",
  "AWS_",
  "CLOUDSDK_",
  "DOCKER_",
  "MAKE",
  "PKG_CONFIG",
  "CCACHE_",
  "CGO_",
  "PYTHON",
  "PIP_",
  "UV_",
  "CONDA_",
  "PERL",
  "RUBY",
  "GEM_",
  "BUNDLE_",
  "NODE_",
  "NPM_CONFIG_",
  "YARN_",
  "COREPACK_",
  "JAVA_",
  "GRADLE_",
  "MAVEN_",
  "DOTNET_",
  "COMPLUS_",
  "CORECLR_",
  "CARGO_",
  "RUSTC",
  "RUSTUP_",
  "LUA_",
]);

/** Suffix families: any name ending with one of these is reserved. */
export const RESERVED_ENV_SUFFIXES: readonly string[] = Object.freeze([
  "PROXY",
  "EDITOR",
  "PAGER",
  "ASKPASS",
  "FLAGS",
  "_OPTIONS",
  "_OPTS",
  "LIBRARY_PATH",
  "_INCLUDE_PATH",
]);

/** Host additions to the denylist. Matching is on the ASCII upper-cased name. */
export interface DenylistAdditions {
  readonly names?: readonly string[];
  readonly prefixes?: readonly string[];
  readonly suffixes?: readonly string[];
}

/** A compiled, frozen denylist: core plus host additions plus the owned prefixes. */
export interface Denylist {
  readonly names: ReadonlySet<string>;
  readonly prefixes: readonly string[];
  readonly suffixes: readonly string[];
}

export interface DenylistOptions extends DenylistAdditions {
  /** The host's prefix; every name starting with it is reserved. Default "EXACTSPAWN_". */
  readonly hostPrefix?: string;
  /** The step-value prefix, reserved for untrusted layers other than step values. Default "RECIPE_VAR_". */
  readonly stepPrefix?: string;
}

const DENYLIST_BRAND: WeakSet<object> = new WeakSet();

function listOfNames(value: unknown, label: string): string[] {
  if (value === undefined) return [];
  return validateNameList(value, label).map(asciiUpper);
}

function prefixOption(value: unknown, label: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || value.length === 0 || /[=\0]/.test(value)) {
    throw new TypeError(`${label} must be a non-empty string without '=' or NUL`);
  }
  return asciiUpper(value);
}

/**
 * Compiles the core denylist plus host additions into a frozen Denylist.
 * Additions can only widen it. Throws TypeError on a malformed option (the
 * message names the option and index, never an entry).
 */
export function createDenylist(options: DenylistOptions | Denylist = {}): Denylist {
  if (isDenylist(options)) return options;
  const hostPrefix = prefixOption(options.hostPrefix, "hostPrefix", DEFAULT_HOST_PREFIX);
  const stepPrefix = prefixOption(options.stepPrefix, "stepPrefix", DEFAULT_STEP_PREFIX);
  const names = new Set([
    ...RESERVED_ENV_DENYLIST,
    ...listOfNames(options.names, "denylist.names"),
  ]);
  const prefixes = [
    ...new Set([
      ...RESERVED_ENV_PREFIXES,
      hostPrefix,
      stepPrefix,
      ...listOfNames(options.prefixes, "denylist.prefixes"),
    ]),
  ];
  const suffixes = [
    ...new Set([...RESERVED_ENV_SUFFIXES, ...listOfNames(options.suffixes, "denylist.suffixes")]),
  ];
  const refuse = (): never => {
    throw new TypeError("the denylist is frozen");
  };
  Object.defineProperties(names, {
    add: { value: refuse },
    delete: { value: refuse },
    clear: { value: refuse },
  });
  const denylist: Denylist = Object.freeze({
    names: Object.freeze(names),
    prefixes: Object.freeze(prefixes),
    suffixes: Object.freeze(suffixes),
  });
  DENYLIST_BRAND.add(denylist);
  return denylist;
}

/** True when `value` is a Denylist built by createDenylist. */
export function isDenylist(value: unknown): value is Denylist {
  return typeof value === "object" && value !== null && DENYLIST_BRAND.has(value);
}

let defaultDenylist: Denylist | undefined;

/**
 * True when an untrusted layer must not set `name`: its ASCII upper-cased form
 * is a reserved exact name, starts with a reserved prefix (including the host
 * and step prefixes) or ends with a reserved suffix. `options` is either a
 * compiled Denylist or additions to compile. Pure; total for any string.
 */
export function isReservedName(name: string, options?: DenylistOptions | Denylist): boolean {
  let denylist: Denylist;
  if (options !== undefined) {
    denylist = createDenylist(options);
  } else {
    defaultDenylist ??= createDenylist();
    denylist = defaultDenylist;
  }
  return matchesDenylist(asciiUpper(String(name)), denylist);
}

/** How a name is matched: namespaced names skip the suffix families. */
export interface DenylistScope {
  /**
   * Match suffix families (default true). A namespaced name (`CTX_FOO_OPTS`,
   * `RECIPE_VAR_FOO_OPTS`) is read by no program under a suffix rule, so the
   * namespace modes turn this off; exact names and prefixes still apply.
   */
  readonly suffixes?: boolean;
  /** A prefix the caller owns (the step prefix for step values): names under it are allowed. */
  readonly ownPrefix?: string;
}

/** The matcher for an already upper-cased name. Pure and total. */
export function matchesDenylist(
  upperName: string,
  denylist: Denylist,
  scope: DenylistScope = {},
): boolean {
  if (scope.ownPrefix !== undefined && upperName.startsWith(scope.ownPrefix)) {
    return denylist.names.has(upperName);
  }
  if (denylist.names.has(upperName)) return true;
  const compiled = compiledPatterns(denylist);
  if (compiled.prefix.test(upperName)) return true;
  return scope.suffixes !== false && compiled.suffix.test(upperName);
}

interface CompiledPatterns {
  readonly prefix: RegExp;
  readonly suffix: RegExp;
}

/** One anchored alternation per family: one regex test instead of a loop over ~50 strings. */
const COMPILED: WeakMap<Denylist, CompiledPatterns> = new WeakMap();

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}

function compiledPatterns(denylist: Denylist): CompiledPatterns {
  let compiled = COMPILED.get(denylist);
  if (compiled === undefined) {
    const alternation = (list: readonly string[]): string =>
      list.length === 0 ? "(?!)" : `(?:${list.map(escapeRegExp).join("|")})`;
    compiled = {
      prefix: new RegExp(`^${alternation(denylist.prefixes)}`),
      suffix: new RegExp(`${alternation(denylist.suffixes)}$`),
    };
    COMPILED.set(denylist, compiled);
  }
  return compiled;
}

/** A bash function definition as shells import it from the environment: `() {`. */
const FUNCTION_BODY = /^\(\)\s*\{/;

/**
 * True when an untrusted value must not be exported under `upperName`:
 * a value that a shell could import as a function body (`() {…`), or a `/`
 * in a locale or time-zone variable (LANG, LANGUAGE, LC_*, TZ), which the C
 * library would treat as a file path to load. Pure and total.
 */
export function isUnsafeValue(upperName: string, value: string): boolean {
  if (FUNCTION_BODY.test(value)) return true;
  const localeOrZone =
    upperName === "LANG" ||
    upperName === "LANGUAGE" ||
    upperName === "TZ" ||
    upperName.startsWith("LC_");
  return localeOrZone && value.includes("/");
}
