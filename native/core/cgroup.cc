// cgroup.cc — see cgroup.h.
#include "cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "pipe.h"
#include "watchdog.h"

namespace exactspawn {

namespace {

// The whole of a small kernel file (mountinfo, cgroup, cpu.stat) into *out.
int read_file(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  out->clear();
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = -errno;
      close(fd);
      return err;
    }
    if (n == 0) break;
    out->append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return 0;
}

// Writes `text` to a cgroup file in one write(2), as the kernel wants it.
int write_file(const std::string& path, const char* text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t length = strlen(text);
  ssize_t n;
  do {
    n = write(fd, text, length);
  } while (n < 0 && errno == EINTR);
  int err = n < 0 ? -errno : 0;
  close(fd);
  return err;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_octal(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '7') {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                      (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

// The value of `key` ("populated", "user_usec") in a "key value" per line file.
int64_t keyed_value(const std::string& text, const char* key) {
  size_t key_length = strlen(key);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (end - at > key_length && text.compare(at, key_length, key) == 0 &&
        text[at + key_length] == ' ') {
      return strtoll(text.c_str() + at + key_length + 1, nullptr, 10);
    }
    at = end + 1;
  }
  return -1;
}

std::mutex subtree_mutex;
// The sub-trees this process made, by parent (a handful at most).
struct Subtree {
  std::string parent;
  std::string path;
};
std::vector<Subtree> subtrees;
std::atomic<uint64_t> next_step{0};

// 64 bits no other host life draws: getrandom(2), else (no entropy yet at
// early boot) the clock and this process's own addresses mixed.
uint64_t life_token() {
  uint64_t token = 0;
  if (getrandom(&token, sizeof token, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof token))
    return token;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  token = static_cast<uint64_t>(now.tv_sec) * 1000000007ULL + static_cast<uint64_t>(now.tv_nsec);
  return token ^ reinterpret_cast<uintptr_t>(&token) ^ (static_cast<uint64_t>(getpid()) << 40);
}

// Whether `name` is a word of a space-separated list (cgroup.controllers).
bool lists(const std::string& words, const char* name) {
  const size_t length = strlen(name);
  for (size_t at = words.find(name); at != std::string::npos; at = words.find(name, at + 1)) {
    const bool starts = at == 0 || words[at - 1] == ' ';
    const size_t end = at + length;
    if (starts && (end == words.size() || words[end] == ' ' || words[end] == '\n')) return true;
  }
  return false;
}

// The controllers a step's cgroup may use (the caller's list: limits, the
// peak, the limit events), each enabled once in the sub-tree where the parent
// delegates it, so every step reports the same whatever earlier steps asked
// (enabled per limit, the first plain steps had no memory.peak and later ones
// had). A controller the kernel refuses to enable here is left off: the steps
// then report null for it, and a limit that needs it names the refusal
// (make_step_cgroup enables a limit's controller again, and fails there).
void enable_controllers(const std::string& subtree, const std::vector<std::string>& controllers) {
  std::string available;
  if (read_file(subtree + "/cgroup.controllers", &available) < 0) return;
  const std::string control = subtree + "/cgroup.subtree_control";
  for (const std::string& name : controllers) {
    const char* controller = name.c_str();
    if (lists(available, controller)) write_file(control, (std::string("+") + controller).c_str());
  }
}

// "<parent>/exactspawn-<pid>-<16 hex>", made once per parent and registered
// with the watchdog. The pid alone is not unique: two hosts in PID
// namespaces of their own share the machine's cgroups with the same pid. The
// token makes the name this host life's, and mkdir(2) without EEXIST makes
// the directory this host's own: a sub-tree another host made (its steps
// running in it) is never taken over, so no watchdog kills what its host did
// not make. Caller reports failures with *failure.
int ensure_subtree(const std::string& parent, const std::vector<std::string>& controllers,
                   std::string* subtree, StepFailure* failure, std::string* failed_path) {
  std::lock_guard<std::mutex> lock(subtree_mutex);
  for (const Subtree& made : subtrees) {
    if (made.parent == parent) {
      *subtree = made.path;
      return 0;
    }
  }
  const std::string stem = parent + "/exactspawn-" + std::to_string(getpid()) + "-";
  int err = -EEXIST;
  for (int attempt = 0; attempt < 4 && err == -EEXIST; ++attempt) {
    char token[17];
    snprintf(token, sizeof token, "%016llx", static_cast<unsigned long long>(life_token()));
    *subtree = stem + token;
    err = mkdir(subtree->c_str(), 0755) == 0 ? 0 : -errno;
  }
  if (err < 0) {
    *failure = {err, "mkdir", "contain"};
    *failed_path = *subtree;
    return err;
  }
  if (err = watchdog_guard_cgroup(*subtree, failure); err < 0) {
    rmdir(subtree->c_str());
    *failed_path = *subtree;
    return err;
  }
  enable_controllers(*subtree, controllers);
  subtrees.push_back({parent, *subtree});
  return 0;
}

// Where cgroup.kill is missing (Linux < 5.14): freeze, SIGKILL every pid,
// thaw; a frozen process cannot fork meanwhile. Descendant cgroups first.
int kill_by_freezing(const std::string& path) {
  if (DIR* dir = opendir(path.c_str())) {
    std::vector<std::string> children;
    while (dirent* entry = readdir(dir)) {
      if (entry->d_type == DT_DIR && entry->d_name[0] != '.') children.push_back(entry->d_name);
    }
    closedir(dir);
    for (const std::string& child : children) kill_by_freezing(path + "/" + child);
  }
  int err = write_file(path + "/cgroup.freeze", "1");
  std::string procs;
  for (int round = 0; round < 8; ++round) {
    if (int r = read_file(path + "/cgroup.procs", &procs); r < 0) return r;
    if (procs.empty()) break;
    const char* at = procs.c_str();
    char* end = nullptr;
    for (long pid = strtol(at, &end, 10); end != at; pid = strtol(at, &end, 10)) {
      // The pid is in the cgroup and frozen: it cannot exit and be reused before the kill.
      kill(static_cast<pid_t>(pid), SIGKILL);
      at = end;
    }
  }
  if (err == 0) err = write_file(path + "/cgroup.freeze", "0");
  return err;
}

int remove_tree(const std::string& path) {
  // Most steps make no cgroup of their own: one rmdir, no listing.
  if (rmdir(path.c_str()) == 0) return 0;
  if (errno != ENOTEMPTY && errno != EBUSY) return -errno;
  if (DIR* dir = opendir(path.c_str())) {
    std::vector<std::string> children;
    while (dirent* entry = readdir(dir)) {
      if (entry->d_type == DT_DIR && entry->d_name[0] != '.') children.push_back(entry->d_name);
    }
    closedir(dir);
    for (const std::string& child : children) remove_tree(path + "/" + child);
  }
  return rmdir(path.c_str()) == 0 ? 0 : -errno;
}

}  // namespace

int find_cgroup_host(CgroupHost* out) {
  std::string mountinfo;
  if (int err = read_file("/proc/self/mountinfo", &mountinfo); err < 0) return err;
  out->mount.clear();
  size_t at = 0;
  while (at < mountinfo.size() && out->mount.empty()) {
    size_t end = mountinfo.find('\n', at);
    if (end == std::string::npos) end = mountinfo.size();
    std::string line = mountinfo.substr(at, end - at);
    at = end + 1;
    // "id parent major:minor root mountpoint options [optional...] - fstype source super"
    size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::vector<std::string> fields;
    size_t from = 0;
    while (from < dash && fields.size() < 5) {
      size_t space = line.find(' ', from);
      if (space == std::string::npos || space > dash) space = dash;
      fields.push_back(line.substr(from, space - from));
      from = space + 1;
    }
    // Only a mount of the hierarchy's root ("/") maps "0::" paths one to one.
    if (fields.size() == 5 && fields[3] == "/") out->mount = unescape_octal(fields[4]);
  }
  if (out->mount.empty()) return -ENOENT;
  std::string cgroup;
  if (int err = read_file("/proc/self/cgroup", &cgroup); err < 0) return err;
  size_t line = cgroup.rfind("0::", 0) == 0 ? 0 : cgroup.find("\n0::");
  if (line == std::string::npos) return -ENOENT;
  if (line != 0) line += 1;
  size_t end = cgroup.find('\n', line);
  std::string path = cgroup.substr(line + 3, end == std::string::npos ? end : end - line - 3);
  // " (deleted)", or a path outside our namespace's root ("/.."): no usable place.
  if (path.empty() || path[0] != '/' || path.find("/..") != std::string::npos) return -ENOENT;
  out->own = path == "/" ? out->mount : out->mount + path;
  return 0;
}

int make_step_cgroup(const std::string& parent, const std::vector<std::string>& controllers,
                     const CgroupLimit* limits, size_t limit_count, StepCgroup* out,
                     StepFailure* failure, std::string* failed_path) {
  std::string subtree;
  if (int err = ensure_subtree(parent, controllers, &subtree, failure, failed_path); err < 0) {
    return err;
  }
  // Controllers the limits need are enabled for the sub-tree's children (the
  // sub-tree holds no process, so it may). Idempotent.
  for (size_t i = 0; i < limit_count; ++i) {
    std::string enable = std::string("+") + limits[i].controller;
    std::string control = subtree + "/cgroup.subtree_control";
    if (int err = write_file(control, enable.c_str()); err < 0) {
      *failure = {err, "write", "contain"};
      *failed_path = control;
      return err;
    }
  }
  std::string path = subtree + "/s" + std::to_string(next_step.fetch_add(1) + 1);
  if (mkdir(path.c_str(), 0755) != 0) {
    *failure = {-errno, "mkdir", "contain"};
    *failed_path = path;
    return failure->err;
  }
  auto undo = [&](int err, const char* call, const std::string& where) {
    close_step_cgroup(out);
    rmdir(path.c_str());
    *failure = {err, call, "contain"};
    *failed_path = where;
    return err;
  };
  for (size_t i = 0; i < limit_count; ++i) {
    std::string file = path + "/" + limits[i].file;
    if (int err = write_file(file, limits[i].value); err < 0) return undo(err, "write", file);
  }
  out->dir_fd = open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (out->dir_fd < 0) return undo(-errno, "open", path);
  std::string events = path + "/cgroup.events";
  out->events_fd = open(events.c_str(), O_RDONLY | O_CLOEXEC);
  if (out->events_fd < 0) return undo(-errno, "open", events);
  out->path = path;
  return 0;
}

// Runs in the vfork child on a borrowed stack: never instrumented (child_path.cc).
__attribute__((no_sanitize_address, noinline)) int enter_cgroup(int dir_fd,
                                                                const char** syscall_name) {
  *syscall_name = "openat";
  long fd = syscall(SYS_openat, dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  *syscall_name = "write";
  long n = syscall(SYS_write, static_cast<int>(fd), "0", 1);
  const int error = n < 0 ? errno : 0;
  syscall(SYS_close, static_cast<int>(fd));
  return -error;
}

int kill_cgroup(const std::string& path) {
  int err = write_file(path + "/cgroup.kill", "1");
  if (err == -ENOENT) return kill_by_freezing(path);
  return err;
}

int cgroup_populated(int events_fd) {
  char buffer[256];
  ssize_t n;
  do {
    n = pread(events_fd, buffer, sizeof buffer - 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  buffer[n] = '\0';
  int64_t populated = keyed_value(std::string(buffer, static_cast<size_t>(n)), "populated");
  return populated < 0 ? -EIO : populated != 0 ? 1 : 0;
}

int wait_cgroup_empty(int events_fd, int timeout_ms) {
  for (;;) {
    int populated = cgroup_populated(events_fd);  // also consumes the pending POLLPRI
    if (populated <= 0) return populated;
    pollfd entry{events_fd, POLLPRI, 0};
    int r = poll(&entry, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -errno;
    if (r == 0) return -ETIMEDOUT;
  }
}

void read_cgroup_usage(const std::string& path, CgroupUsage* usage) {
  std::string text;
  if (read_file(path + "/cpu.stat", &text) == 0) {
    usage->user_micros = keyed_value(text, "user_usec");
    usage->system_micros = keyed_value(text, "system_usec");
    usage->throttled_micros = keyed_value(text, "throttled_usec");
    usage->throttled_periods = keyed_value(text, "nr_throttled");
  }
  if (read_file(path + "/memory.peak", &text) == 0)
    usage->memory_peak = strtoll(text.c_str(), nullptr, 10);
  if (read_file(path + "/memory.events", &text) == 0) {
    usage->oom_kills = keyed_value(text, "oom_kill");
    usage->memory_max = keyed_value(text, "max");
    usage->oom = keyed_value(text, "oom");
  }
  if (read_file(path + "/pids.events", &text) == 0) usage->pids_max = keyed_value(text, "max");
}

int remove_cgroup(const std::string& path) { return remove_tree(path); }

void close_step_cgroup(StepCgroup* cgroup) {
  if (cgroup->dir_fd >= 0) close_fd(cgroup->dir_fd);
  if (cgroup->events_fd >= 0) close_fd(cgroup->events_fd);
  cgroup->dir_fd = -1;
  cgroup->events_fd = -1;
}

int end_step_cgroup(StepCgroup* cgroup, int timeout_ms, CgroupUsage* usage) {
  if (cgroup->path.empty()) return 0;
  // A tree already gone (the common end: the leader was its last process)
  // needs no kill; any process left is killed and waited for.
  int err = 0;
  if (cgroup->events_fd < 0 || cgroup_populated(cgroup->events_fd) != 0) {
    err = kill_cgroup(cgroup->path);
    int waited = cgroup->events_fd >= 0 ? wait_cgroup_empty(cgroup->events_fd, timeout_ms) : 0;
    if (err == 0) err = waited;
  }
  if (usage != nullptr) read_cgroup_usage(cgroup->path, usage);
  int removed = remove_cgroup(cgroup->path);
  if (err == 0) err = removed;
  close_step_cgroup(cgroup);
  if (removed == 0) cgroup->path.clear();
  return err;
}

}  // namespace exactspawn
