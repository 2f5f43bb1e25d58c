/** Open fds of this process. */
export function openFdCount(): number;
/** Open pidfds of this process. */
export function pidfdCount(): number;
/** Pids of the children of `parent` (default: this process) in state Z. */
export function zombieChildren(parent?: number): number[];
