/**
 * resourceUsageOf: the engine-neutral usage of a raw native exit. A contained
 * step's peak is its tree's (memory.peak) where the memory controller gives
 * one, never the leader's rusage figure, which starts from the host's
 * high-water mark (docs/spawn.md#what-a-child-cost, docs/containment.md).
 */
import { describe, expect, it } from "vitest";
import { resourceUsageOf } from "../../src/spawn/engine.js";

const leader = { userCpuMicros: 10, systemCpuMicros: 20, maxRssKiB: null };

/** The limit counts of a tree without controllers (not what these tests look at). */
const NO_EVENTS = {
  memoryMaxEvents: null,
  oomEvents: null,
  pidsMaxEvents: null,
  cpuThrottledMicros: null,
  cpuThrottledPeriods: null,
};

describe("resourceUsageOf", () => {
  it("an uncontained child: the reap's rusage as it came", () => {
    expect(resourceUsageOf({ ...leader, maxRssKiB: 4096 })).toEqual({
      userCpuMicros: 10,
      systemCpuMicros: 20,
      maxRssKiB: 4096,
    });
  });

  it("a contained step: the tree's CPU and the tree's peak in KiB, rounded up", () => {
    const tree = {
      userCpuMicros: 400_000,
      systemCpuMicros: 5,
      memoryPeakBytes: 30 * 1024 * 1024 + 1,
      oomKills: 0,
      ...NO_EVENTS,
    };
    expect(resourceUsageOf({ ...leader, tree })).toEqual({
      userCpuMicros: 400_000,
      systemCpuMicros: 20,
      maxRssKiB: 30 * 1024 + 1,
      memoryPeakBytes: 30 * 1024 * 1024 + 1,
    });
  });

  it("a contained step without the memory controller: the peak stays unknown", () => {
    const tree = {
      userCpuMicros: 1,
      systemCpuMicros: 1,
      memoryPeakBytes: null,
      oomKills: null,
      ...NO_EVENTS,
    };
    expect(resourceUsageOf({ ...leader, tree })).toMatchObject({
      maxRssKiB: null,
      memoryPeakBytes: null,
    });
  });
});
