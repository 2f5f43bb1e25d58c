/** One kernel mutant: the edits that make it, the tier's checks that must go red, and where. */
export interface KernelMutant {
  readonly why: string;
  readonly edits: readonly {
    readonly file: string;
    readonly search: string;
    readonly replace: string;
  }[];
  readonly checks: readonly string[];
  readonly kernels: readonly string[];
}
/** name → the mutant (scripts/kernels-mutants.mjs). */
export const KERNEL_MUTANTS: Readonly<Record<string, KernelMutant>>;
