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
import { ownProperties } from "../known-options.js";
import { refuseMutation } from "./frozen-map.js";
import { asciiUpper, validateNameList } from "./names.js";

/** The host's own prefix by default (names the environment builder owns). */
export const DEFAULT_HOST_PREFIX = "EXACTSPAWN_";
/** The step-value prefix by default (names only the step-value layer may set). */
export const DEFAULT_STEP_PREFIX = "RECIPE_VAR_";

/** The 22 names the amplihack recipe runner's context export reserves, kept verbatim as the base. */
const RECIPE_RUNNER_RESERVED_NAMES = [
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

/** Exact names added beyond the recipe runner's; grouped as in docs/denylist.md. */
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
  // bash's own behaviour variables (the bash manual's "Bash Variables")
  "PS0",
  "FUNCNEST",
  "FCEDIT",
  "EXECIGNORE",
  "TIMEFORMAT",
  "FIGNORE",
  "HOSTFILE",
  "IGNOREEOF",
  "MAIL",
  "MAILCHECK",
  "OPTERR",
  "OPTIND",
  "OPTARG",
  "CHILD_MAX",
  "GLOBSORT",
  "SHLVL",
  "RANDOM",
  "SRANDOM",
  "SECONDS",
  "LINENO",
  "COLUMNS",
  "LINES",
  "HOSTNAME",
  "HOSTTYPE",
  "MACHTYPE",
  "OSTYPE",
  "UID",
  "EUID",
  "PPID",
  "GROUPS",
  "DIRSTACK",
  "FUNCNAME",
  "PIPESTATUS",
  "REPLY",
  "COPROC",
  "EPOCHSECONDS",
  "EPOCHREALTIME",
  "COMPREPLY",
  // C library: loader, iconv, locale files, resolver, allocator, time zones
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "RESOLV_HOST_CONF",
  "RES_OPTIONS",
  "LOCALDOMAIN",
  "TZDIR",
  "GETCONF_DIR",
  "DEPENDENCIES_OUTPUT",
  "SUNPRO_DEPENDENCIES",
  // temporary files (spill files and scripts are written under TMPDIR)
  "TMPDIR",
  "TMP",
  "TEMP",
  "TEMPDIR",
  // programs other programs launch
  "EDITOR",
  "VISUAL",
  "BROWSER",
  "DISPLAY",
  "XENVIRONMENT",
  "XFILESEARCHPATH",
  "XUSERFILESEARCHPATH",
  "XAPPLRESDIR",
  "XMODIFIERS",
  "MAILRC",
  "MAILCAPS",
  "MORE",
  "GZIP",
  "BZIP",
  "BZIP2",
  "UNZIP",
  "UNZIPOPT",
  "ZIPOPT",
  "ZIPINFO",
  "ZIPINFOOPT",
  "NETRC",
  "NOTIFY_SOCKET",
  "CREDENTIALS_DIRECTORY",
  // build tools and compilers: make's built-in program variables, autoconf, binutils
  "CC",
  "CXX",
  "CPP",
  "CXXCPP",
  "LD",
  "AR",
  "AS",
  "NM",
  "RANLIB",
  "STRIP",
  "OBJCOPY",
  "OBJDUMP",
  "READELF",
  "ELFEDIT",
  "ADDR2LINE",
  "DLLTOOL",
  "WINDRES",
  "FC",
  "F77",
  "F90",
  "F95",
  "GFORTRAN",
  "OBJC",
  "OBJCXX",
  "M2C",
  "PC",
  "CO",
  "GET",
  "LEX",
  "YACC",
  "YACCR",
  "BISON",
  "FLEX",
  "LINT",
  "MAKEINFO",
  "TEXI2DVI",
  "WEAVE",
  "CWEAVE",
  "TANGLE",
  "CTANGLE",
  "TEX",
  "TEXINDEX",
  "TEXFORMATS",
  "TEXPOOL",
  "TEXFONTS",
  "TEXCONFIG",
  "TEXEDIT",
  "MFEDIT",
  "MPEDIT",
  "RM",
  "LDLIBS",
  "LOADLIBES",
  "OUTPUT_OPTION",
  "TARGET_ARCH",
  "TARGET_MACH",
  "VPATH",
  "GPATH",
  "LIBS",
  "CPATH",
  "COMPILER_PATH",
  "GCC_EXEC_PREFIX",
  "M4",
  "M4PATH",
  "AUTOCONF",
  "AUTOHEADER",
  "AUTOM4TE",
  "AUTOMAKE",
  "AUTORECONF",
  "ACLOCAL",
  "ACLOCAL_PATH",
  "LIBTOOL",
  "LIBTOOLIZE",
  "LTCC",
  "AWK",
  "SED",
  "GREP",
  "EGREP",
  "FGREP",
  "MKDIR_P",
  "INSTALL",
  "LN_S",
  "DESTDIR",
  "NVCC",
  "HIPCC",
  "GCCGO",
  "ARCH",
  "SUBARCH",
  "HOSTCC",
  "HOSTCXX",
  "HOSTLD",
  "HOSTAR",
  "HOSTPKG_CONFIG",
  "TARGET_CC",
  "TARGET_CXX",
  "TARGET_AR",
  "TARGET_LD",
  "HOST_CC",
  "HOST_CXX",
  "HOST_AR",
  "HOST_LD",
  "KERNELRELEASE",
  "INSTALL_MOD_PATH",
  "INSTALL_PATH",
  "USE_BAZEL_VERSION",
  "CUDACXX",
  "CUDAHOSTCXX",
  "CUDAARCHS",
  "HIPCXX",
  "HIPARCHS",
  "ASM",
  "ASM_DIALECT",
  "ISPC",
  "RC",
  "SWIFTC",
  "ERL",
  "ERLC",
  "GOC",
  "NROFF",
  "TROFF",
  "SCONSFLAGS",
  "MESONINTROSPECT",
  "SHELLCHECK_OPTS",
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
  "GONOSUMCHECK",
  "GOSUMDB",
  "GOCACHE",
  "GOMODCACHE",
  "GOEXPERIMENT",
  "GODEBUG",
  "GOAUTH",
  "GOVCS",
  "GOWORK",
  "GOTMPDIR",
  "GOTOOLDIR",
  "GOOS",
  "GOARCH",
  "GOAMD64",
  "GOARM",
  "GOARM64",
  "GO386",
  "GOMIPS",
  "GOMIPS64",
  "GOPPC64",
  "GORISCV64",
  "GOWASM",
  "GOEXE",
  "GOFIPS140",
  "GOTELEMETRY",
  "GOTELEMETRYDIR",
  "GOCOVERDIR",
  "GOGC",
  "GOMAXPROCS",
  "GOMEMLIMIT",
  "GOTRACEBACK",
  "GOROOT_FINAL",
  "IRBRC",
  "RAKEOPT",
  "TESTOPTS",
  "SPEC_OPTS",
  "N_PREFIX",
  "CONDARC",
  "CLJ_CONFIG",
  "CHEZSCHEMELIBDIRS",
  "REGISTRY_AUTH_FILE",
  // TLS trust, key logging, credentials and remote endpoints
  "SSLKEYLOGFILE",
  "CURL_CA_BUNDLE",
  "REQUESTS_CA_BUNDLE",
  "CURL_HOME",
  "WGETRC",
  "GNUPGHOME",
  "KUBECONFIG",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "XAUTHORITY",
  "HTTPLIB2_CA_CERTS",
  "WEBSOCKET_CLIENT_CA_BUNDLE",
  "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
  "LDAPCONF",
  "LDAPRC",
  // man and groff (man-db's ENVIRONMENT section)
  "MANPATH",
  "MANOPT",
  "MANSECT",
  "MANWIDTH",
  "MANROFFOPT",
  "MANROFFSEQ",
  "MANLESS",
  "MANPL",
  "MANPAGER",
  "SYSTEM",
  "INFOPATH",
  "ESHELL",
  "INSIDE_EMACS",
  "PWDEBUG",
  "CA_BUNDLE",
  // remote shells of version control and file transfer
  "CVSROOT",
  "CVSEDITOR",
  "CVSREAD",
  "CVSIGNORE",
  "CVSWRAPPERS",
  "CVSUMASK",
  "RCSINIT",
  "RSH",
  // terminal descriptions
  "TERM",
  "TERMINFO",
  "TERMINFO_DIRS",
  "TERMCAP",
  "TERMPATH",
  "SCREENRC",
  "SYSSCREENRC",
  "SCREENDIR",
  // browser-automation executable paths
  "CHROME_PATH",
  "CHROME_BIN",
  "CHROMIUM_BIN",
  "CHROMIUM_PATH",
  "FIREFOX_BIN",
  "EDGE_BIN",
  "SAFARI_BIN",
  "OPERA_BIN",
] as const;

/**
 * The frozen core of exact reserved names: the recipe runner's 22 names plus the
 * widened set. Prefix and suffix families are in RESERVED_ENV_PREFIXES and
 * RESERVED_ENV_SUFFIXES; the host and step prefixes are added per policy.
 */
export const RESERVED_ENV_DENYLIST: readonly string[] = Object.freeze([
  ...RECIPE_RUNNER_RESERVED_NAMES,
  ...WIDENED_RESERVED_NAMES,
]);

/** The recipe runner's own 22 names (a subset of RESERVED_ENV_DENYLIST), for presets and tests. */
export const RECIPE_RUNNER_RESERVED_ENV_NAMES: readonly string[] = Object.freeze([
  ...RECIPE_RUNNER_RESERVED_NAMES,
]);
/** @deprecated The same list under its first name; use RECIPE_RUNNER_RESERVED_ENV_NAMES. */
export const SEED_RESERVED_ENV_NAMES = RECIPE_RUNNER_RESERVED_ENV_NAMES;

/** Prefix families: any name starting with one of these is reserved. */
export const RESERVED_ENV_PREFIXES: readonly string[] = Object.freeze([
  // loader, C library, allocator, profiling output
  "LD_",
  "DYLD_",
  "GCONV_",
  "GLIBC_",
  "MALLOC_",
  "MEMUSAGE_",
  "SEGFAULT_",
  "GMON_",
  "LIBC_",
  "__GL",
  "__EGL",
  "__NV_",
  // shells: bash's behaviour, history, completion, readline, prompts
  "BASH",
  "BASH_FUNC_",
  "PROMPT_",
  "HIST",
  "COMP_",
  "READLINE_",
  "ZSH",
  "KSH_",
  // pagers, terminals, multiplexers, desktop and graphics stacks
  "LESS",
  "TERM",
  "NCURSES_",
  "TMUX",
  "XDG_",
  "DBUS_",
  "WAYLAND_",
  "XCURSOR_",
  "GTK",
  "QT_",
  "GIO_",
  "GST_",
  "GI_",
  "GSETTINGS_",
  "LIBGL_",
  "MESA_",
  "VK_",
  "OCL_ICD",
  "SDL_",
  "PULSE_",
  "SYSTEMD_",
  "LISTEN_",
  // editor startup (vim, neovim, emacs, others)
  "VIM",
  "GVIM",
  "MYVIMRC",
  "MYGVIMRC",
  "NVIM",
  "EXINIT",
  "NEXINIT",
  "EMACS",
  "XEMACS",
  "KAKOUNE_",
  "MICRO_",
  // version control and its remote shells
  "GIT_",
  "PRE_COMMIT",
  "CVS",
  "SVN_",
  "BZR",
  "BRZ",
  "HG",
  "DARCS_",
  "P4",
  "FOSSIL_",
  "RSYNC_",
  // TLS stacks, key logging, trust stores, credentials and directory services
  "SSH_",
  "OPENSSL_",
  "SSL",
  "GNUTLS_",
  "NSS_",
  "NSPR_",
  "CURL_",
  "GRPC_",
  "KRB5",
  "GSS_",
  "SASL_",
  "LDAP",
  "P11_KIT_",
  "GNUPG",
  "GPG_",
  "PASSWORD_STORE_",
  "SUDO_",
  "VAULT_",
  "ETCDCTL_",
  "ODBC",
  "PG",
  "MYSQL",
  // clouds, containers, infrastructure CLIs
  "AWS_",
  "CLOUDSDK_",
  "GOOGLE_",
  "AZURE_",
  "ARM_",
  "DOCKER_",
  "BUILDKIT_",
  "BUILDX_",
  "COMPOSE_",
  "CONTAINERS_",
  "PODMAN_",
  "BUILDAH_",
  "KUBE",
  "HELM_",
  "TF_",
  "TERRAFORM_",
  "KREW_",
  "KUSTOMIZE_",
  "SKAFFOLD_",
  "TG_",
  "TERRAGRUNT_",
  "TOFU_",
  "PULUMI_",
  "ANSIBLE_",
  "PACKER_",
  "VAGRANT_",
  "NOMAD_",
  "CONSUL_",
  "GH_",
  "GITHUB_",
  "GLAB_",
  "GITLAB_",
  "NIX_",
  "HOMEBREW_",
  "APT_",
  "DEBCONF_",
  "DPKG_",
  // build systems, toolchain selection, compiler caches and wrappers
  "MAKE",
  "CONFIG_",
  "PKG_CONFIG",
  "CCACHE_",
  "SCCACHE_",
  "DISTCC_",
  "ICECC_",
  "CGO_",
  "CMAKE_",
  "CCMAKE_",
  "CTEST_",
  "CPACK_",
  "MESON_",
  "NINJA_",
  "BAZEL",
  "KBUILD_",
  "KCONFIG_",
  "CROSS_",
  "GCC_",
  "COLLECT_",
  "LLVM_",
  "LIBCLANG",
  "CLANG_",
  "BINDGEN_",
  "CRATE_CC_",
  "INSTALL_",
  "TEXMF",
  "GROFF",
  "MAN_",
  "PIPELINE_",
  // languages, interpreters, package managers
  "PYTHON",
  "_PYTHON",
  "PIP_",
  "PIPX_",
  "PIPENV_",
  "POETRY_",
  "PDM_",
  "HATCH_",
  "RYE_",
  "UV_",
  "VIRTUALENV_",
  "SETUPTOOLS_",
  "DISTUTILS_",
  "PYO3_",
  "MATURIN_",
  "CONDA",
  "MAMBA",
  "MICROMAMBA_",
  "IPYTHON",
  "JUPYTER_",
  "MPL",
  "COVERAGE_",
  "PERL",
  "RUBY",
  "GEM_",
  "BUNDLE_",
  "BUNDLER_",
  "IRB",
  "NODE_",
  "NPM_",
  "NPM_CONFIG_",
  "PNPM_",
  "YARN_",
  "COREPACK_",
  "BUN_",
  "DENO_",
  "TS_NODE_",
  "ESBUILD_",
  "PRISMA_",
  "ELECTRON_",
  "BABEL_",
  "JAVA_",
  "JDK_",
  "GRADLE_",
  "ORG_GRADLE_",
  "MAVEN_",
  "M2_",
  "ANT_",
  "SBT_",
  "LEIN_",
  "COURSIER_",
  "DOTNET_",
  "COMPLUS_",
  "CORECLR_",
  "NUGET_",
  "MSBUILD",
  "CARGO_",
  "RUSTC",
  "RUSTDOC",
  "RUSTUP_",
  "GO_",
  "LUA_",
  "LUAROCKS_",
  "TCL",
  "TK_",
  "R_",
  "ERL_",
  "ELIXIR_",
  "MIX_",
  "HEX_",
  "REBAR",
  "GUILE_",
  "JULIA_",
  "OCTAVE_",
  "GHC_",
  "CABAL_",
  "STACK_",
  "OCAML",
  "OPAM",
  "PLT_",
  "PHP",
  "DART_",
  "PUB_",
  "FLUTTER_",
  // test runners and their option variables
  "PYTEST_",
  "NOSE_",
  "JASMINE_",
  "COV_CORE_",
  "TOX_",
  "NOX_",
  "HYPOTHESIS_",
  "JEST_",
  "VITEST_",
  "VITE_",
  "MOCHA_",
  "TAP_",
  "AVA_",
  "KARMA_",
  "CYPRESS_",
  "NYC_",
  "C8_",
  "BATS_",
  "PHPUNIT_",
  // language version managers
  "PYENV",
  "RBENV",
  "NVM_",
  "NODENV",
  "GOENV",
  "ASDF_",
  "VOLTA_",
  "SDKMAN_",
  "JENV_",
  "PLENV",
  "PHPENV",
  "NODIST_",
  "FNM_",
  "MISE_",
  "RTX_",
  "PROTO_",
  "JABBA_",
  "RVM_",
  "GVM_",
  "LUAENV",
  "SWIFTENV",
  "TFENV",
  "TGENV",
  "DIRENV_",
  "CHRUBY_",
  "GIMME_",
  "VFOX_",
  "AQUA_",
  "PIXI_",
  "HERMIT_",
  // browser automation: which browser or driver binary runs
  "PUPPETEER_",
  "PYPPETEER_",
  "PLAYWRIGHT_",
  "CHROME_",
  "CHROMEDRIVER",
  "GECKODRIVER",
  "EDGEDRIVER",
  "SELENIUM_",
  "SE_",
  "WEBDRIVER",
  "WDM_",
  "PW_",
  "MOZ_",
  "FIREFOX",
  // command-running conveniences of everyday tools
  "FZF_",
  "RIPGREP_",
  "BAT_",
  "PARALLEL",
  "XZ_",
  "ZSTD_",
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
  // toolchain selection: launchers, wrappers, per-build/per-target tools
  "_LAUNCHER",
  "_WRAPPER",
  "_COMPILER",
  "_FOR_BUILD",
  "_FOR_TARGET",
  // TLS trust stores and key logs under any program's prefix
  "_CA_BUNDLE",
  "CA_CERTS",
  "_CAINFO",
  "_CAPATH",
  "_CA_FILE",
  "_CA_PATH",
  "_CERT_FILE",
  "_CERT_DIR",
  "_CACERT",
  "KEYLOGFILE",
  // executables chosen by path, and tool home directories
  "_BIN",
  "_BINARY",
  "_BINARY_PATH",
  "_EXECUTABLE",
  "_EXECUTABLE_PATH",
  "_HOME",
  "_CONFIG_FILE",
  "RCPATH",
  "INPUTS",
  "_DIRECTORY",
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
  // Own properties only: an inherited `names` or `prefixes` is no addition.
  options = ownProperties(options);
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
  refuseMutation(names, ["add", "delete", "clear"], "the denylist is frozen");
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
