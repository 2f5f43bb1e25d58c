// capabilities.h — the raw capget(2)/capset(2) ABI (no libcap): the header
// and the per-word sets of _LINUX_CAPABILITY_VERSION_3, whose two words cover
// capabilities 0-63. Code between clone and exec makes the raw calls itself,
// so it stays a plain system call; the host's probes ask holds_capability().
#ifndef EXACTSPAWN_CORE_CAPABILITIES_H_
#define EXACTSPAWN_CORE_CAPABILITIES_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace exactspawn {

struct CapHeader {
  uint32_t version;
  int pid;  // 0: the calling thread
};

// One 32-bit word of each set; capget/capset take two (CapData[2]).
struct CapData {
  uint32_t effective;
  uint32_t permitted;
  uint32_t inheritable;
};

constexpr uint32_t kCapabilityVersion3 = 0x20080522;  // _LINUX_CAPABILITY_VERSION_3
constexpr int kCapSetpcap = 8;                        // CAP_SETPCAP
constexpr int kCapSysAdmin = 21;                      // CAP_SYS_ADMIN

// Whether the calling thread's effective set holds `capability` (0-31).
inline bool holds_capability(int capability) {
  CapHeader header = {kCapabilityVersion3, 0};
  CapData data[2] = {};
  return syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1U << capability)) != 0;
}

}  // namespace exactspawn

#endif  // EXACTSPAWN_CORE_CAPABILITIES_H_
