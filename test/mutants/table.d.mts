/** One control removed by one literal change (see table.mjs). */
export interface Mutant {
  readonly name: string;
  /** The control's name: the first column of docs/security.md's controls table. */
  readonly control: string;
  readonly file: string;
  /** Found exactly once in `file`. */
  readonly search: string;
  readonly replace: string;
  /** The addon is rebuilt with the change. */
  readonly native: boolean;
  /** Test files that must go red with the change. */
  readonly tests: readonly string[];
  /** Why the change cannot be seen: the row is listed, not run. */
  readonly equivalent?: string;
  /**
   * What the host must offer for the row's tests to run (e.g. cgroup
   * controllers delegated): where they all skip, the result is "skipped
   * here", not a survivor; the kernel tier runs them.
   */
  readonly kernel?: string;
  /** Where the code is being rewritten: the row will likely need re-pointing. */
  readonly moves?: string;
}

export const MUTANTS: readonly Mutant[];
/** docs/security.md controls without a mutant, and why. */
export const UNMUTATED: Readonly<Record<string, string>>;
