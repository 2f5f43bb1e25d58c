// helper_file.cc — see helper_file.h.
#include "helper_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

namespace exactspawn {

namespace {

constexpr unsigned kMfdExec = 0x10;  // MFD_EXEC (Linux 6.3)
constexpr long kFaccessat2 = 439;    // the same number on every architecture

// The exec helper, opened once per set_helper_path(), on one descriptor
// for the process's life (every worker's loader sets the same path).
struct HelperState {
  std::mutex lock;
  std::string path;
  int fd = -1;                // the helper's descriptor; kept open across set_helper_path()
  bool usable = false;        // fd is the helper of `path`
  const char* run = nullptr;  // "file", "memory", "unavailable"
  StepFailure failure;
  std::string reason;  // why it cannot run where errno alone does not say
};

HelperState& helper_state() {
  static HelperState* state = new HelperState();  // never destroyed: spawns may outlive statics
  return *state;
}

// The ELF machine this process runs (the addon's own build), 0 where unknown.
constexpr uint16_t kOwnMachine =
#if defined(__x86_64__)
    62;  // EM_X86_64
#elif defined(__aarch64__)
    183;  // EM_AARCH64
#elif defined(__i386__)
    3;  // EM_386
#elif defined(__arm__)
    40;  // EM_ARM
#else
    0;
#endif

const char* machine_name(uint16_t machine) {
  switch (machine) {
    case 62:
      return "x86_64";
    case 183:
      return "aarch64";
    case 3:
      return "i386";
    case 40:
      return "arm";
    case 243:
      return "riscv";
    case 21:
      return "ppc64";
    case 22:
      return "s390";
    default:
      return nullptr;
  }
}

// Whether the file open at `fd` is an ELF executable for this process's
// machine; else ENOEXEC with *reason saying what it is. A helper built for
// another architecture would otherwise fail at every exec with a bare 127
// (or run under a binfmt emulator without the kernel calls it makes).
int check_machine(int fd, std::string* reason) {
  unsigned char header[20] = {};
  ssize_t n = pread(fd, header, sizeof header, 0);
  if (n < 0) return -errno;
  if (n < static_cast<ssize_t>(sizeof header) || header[0] != 0x7f || header[1] != 'E' ||
      header[2] != 'L' || header[3] != 'F') {
    *reason = "not an ELF executable";
    return -ENOEXEC;
  }
  // e_machine at offset 18, in the file's byte order (EI_DATA: 1 little, 2 big).
  const uint16_t machine = header[5] == 2 ? static_cast<uint16_t>(header[18] << 8 | header[19])
                                          : static_cast<uint16_t>(header[19] << 8 | header[18]);
  if (kOwnMachine == 0 || machine == kOwnMachine) return 0;
  const char* built = machine_name(machine);
  *reason = std::string("built for ") +
            (built != nullptr ? built : "ELF machine " + std::to_string(machine)) +
            ", this process runs " + machine_name(kOwnMachine);
  return -ENOEXEC;
}

// Why the build left the helper out (binding.gyp writes PATH.absent when the
// toolchain cannot link it), or "" when it says nothing.
std::string absence_reason(const std::string& path) {
  int fd = open((path + ".absent").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char text[512];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return "";
  std::string out(text, static_cast<size_t>(n));
  const size_t end = out.find('\n');
  return end == std::string::npos ? out : out.substr(0, end);
}

// A sealed, executable in-memory copy of the file open at `fd`. Returns the
// memfd or -errno with *failure naming the call.
int copy_to_memory(int fd, StepFailure* failure) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *failure = {-errno, "fstat", "helper"};
    return failure->err;
  }
  int copy = static_cast<int>(
      syscall(SYS_memfd_create, "exactspawn-helper", MFD_CLOEXEC | MFD_ALLOW_SEALING | kMfdExec));
  if (copy < 0 && errno == EINVAL) {  // a kernel before 6.3: no MFD_EXEC, memfds are executable
    copy = static_cast<int>(
        syscall(SYS_memfd_create, "exactspawn-helper", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  }
  if (copy < 0) {
    *failure = {-errno, "memfd_create", "helper"};
    return failure->err;
  }
  off_t offset = 0;
  while (offset < st.st_size) {
    ssize_t n = sendfile(copy, fd, &offset, static_cast<size_t>(st.st_size - offset));
    if (n <= 0) {
      *failure = {n < 0 ? -errno : -EIO, "sendfile", "helper"};
      close(copy);
      return failure->err;
    }
  }
  if (fcntl(copy, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    *failure = {-errno, "fcntl", "helper"};
    close(copy);
    return failure->err;
  }
  if (syscall(kFaccessat2, copy, "", X_OK, kAtEmptyPath) != 0) {
    *failure = {-errno, "faccessat2", "helper"};
    close(copy);
    return failure->err;
  }
  return copy;
}

// Makes `fd` the helper's descriptor: the number the process already holds
// for it when there is one (a spawn on another thread may be about to exec
// it: it then execs the new helper), so the process never holds two.
void keep_descriptor(HelperState* state, int fd) {
  if (state->fd >= 0 && dup3(fd, state->fd, O_CLOEXEC) >= 0) {
    close(fd);
  } else {
    state->fd = fd;
  }
  state->usable = true;
}

// Opens the helper at its first use (the state's lock held): its own file
// where it can be exec'd, else an in-memory copy, else the reason it cannot
// run (kept: every later spawn reports it).
void open_helper(HelperState* state) {
  if (state->run != nullptr) return;
  state->run = "unavailable";
  state->usable = false;
  state->reason.clear();
  StepFailure failure;
  // O_RDONLY rather than O_PATH: the in-memory copy reads it.
  int fd = open(state->path.c_str(), O_RDONLY | O_CLOEXEC);
  int machine = 0;
  if (fd < 0) {
    failure = {-errno, "open", "helper"};
    if (failure.err == -ENOENT) state->reason = absence_reason(state->path);
  } else if ((machine = check_machine(fd, &state->reason)) != 0) {
    failure = {machine, machine == -ENOEXEC ? nullptr : "pread", "helper"};
    close(fd);
  } else if (syscall(kFaccessat2, fd, "", X_OK, kAtEmptyPath) == 0) {
    keep_descriptor(state, fd);
    state->run = "file";
  } else {
    // Not executable where it lies (its mode, a noexec mount): a copy in memory.
    int copy = copy_to_memory(fd, &failure);
    close(fd);
    if (copy >= 0) {
      keep_descriptor(state, copy);
      state->run = "memory";
    }
  }
  state->failure = failure;
}

}  // namespace

// The helper's descriptor and a copy of its path, or -errno with *failure
// saying why it cannot run.
int helper_fd(StepFailure* failure, std::string* path, bool* from_file) {
  HelperState& state = helper_state();
  std::lock_guard<std::mutex> guard(state.lock);
  if (state.path.empty()) {
    *failure = {-ENOENT, "open", "helper"};
    return failure->err;
  }
  open_helper(&state);
  if (!state.usable) {
    *failure = state.failure;
    return failure->err;
  }
  *path = state.path;
  *from_file = std::strcmp(state.run, "file") == 0;
  return state.fd;
}

int set_helper_path(const char* path, StepFailure* failure) {
  HelperState& state = helper_state();
  std::lock_guard<std::mutex> guard(state.lock);
  *failure = {};
  // Each worker's loader sets it again: the same path keeps what is open.
  if (state.path == path) return 0;
  state.path = path;
  state.usable = false;
  state.run = nullptr;
  state.failure = {};
  state.reason.clear();
  return 0;
}

const char* helper_run(const char** path, StepFailure* failure, const char** reason) {
  HelperState& state = helper_state();
  std::lock_guard<std::mutex> guard(state.lock);
  if (!state.path.empty()) open_helper(&state);
  *path = state.path.c_str();
  *failure = state.failure;
  if (reason != nullptr) *reason = state.reason.c_str();
  return state.run;
}

}  // namespace exactspawn
