// spawn_args.cc — see spawn_args.h.
#include "spawn_args.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/child_path.h"
#include "core/helper_file.h"
#include "core/pipe.h"
#include "core/spawn_process.h"
#include "system_error.h"

namespace exactspawn {

namespace {

// A string's UTF-8 in one Node-API call when it fits the stack buffer (a
// path usually does), else the two of Utf8Value (length, then bytes). A cut
// string stops at a whole character, so it fills all but at most 3 of the
// 255 bytes: 251 or fewer can only be the whole string.
std::string Utf8Of(Napi::Env env, Napi::Value value) {
  char buffer[256];
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, buffer, sizeof(buffer), &length) == napi_ok &&
      length + 4 < sizeof(buffer)) {
    return std::string(buffer, length);
  }
  return value.As<Napi::String>().Utf8Value();
}

std::string StringOf(Napi::Env env, Napi::Value value, const std::string& where) {
  std::string out;
  if (value.IsString()) {
    out = Utf8Of(env, value);
  } else if (value.IsBuffer()) {
    Napi::Buffer<char> buffer = value.As<Napi::Buffer<char>>();
    out.assign(buffer.Data(), buffer.Length());
  } else {
    ThrowTypeError(env, where + " must be a string or Buffer");
  }
  if (std::memchr(out.data(), '\0', out.size()) != nullptr) {
    ThrowTypeError(env, where + " contains a NUL byte");
  }
  return out;
}

// A packed list: `bytes` holds `count` NUL-terminated strings back to back.
// Only the count's type is read here; ResolvePacked checks the bytes.
void ReadPacked(Napi::Env env, Napi::Buffer<char> bytes, Napi::Value count_value,
                const std::string& key, bool non_empty, CStringList* list) {
  if (!count_value.IsNumber()) {
    ThrowTypeError(env, "spawn: " + key + "Count must be a number with a packed " + key);
  }
  double count = count_value.As<Napi::Number>().DoubleValue();
  // Every string takes at least its NUL: a count beyond the length can only
  // be wrong (ResolvePacked checks it against the length again).
  if (!(count >= 0 && count <= static_cast<double>(bytes.Length())) || count != std::trunc(count)) {
    ThrowTypeError(env, "spawn: " + key + "Count must be an integer from 0 to the packed length");
  }
  if (non_empty && count == 0) ThrowTypeError(env, "spawn: " + key + " must not be empty");
  list->is_packed = true;
  list->packed = bytes;  // as a Value: Napi::Buffer caches its data and length
  list->packed_count = static_cast<size_t>(count);
}

// The pointers into a packed list, in one pass and without copying: called
// when no JavaScript can run before the spawn (a getter read after ReadList
// could have changed or detached the bytes; a detached Buffer has length 0).
void ResolvePacked(Napi::Env env, const char* key, CStringList* list) {
  if (!list->is_packed) return;
  // Asked afresh: a getter may have detached the bytes since ReadPacked.
  void* data = nullptr;
  size_t length = 0;
  if (napi_get_buffer_info(env, list->packed, &data, &length) != napi_ok) {
    ThrowTypeError(env, std::string("spawn: the packed ") + key + " is no longer a Buffer");
  }
  char* at = static_cast<char*>(data);
  size_t expected = list->packed_count;
  if (expected > length || (length > 0 && at[length - 1] != '\0')) {
    ThrowTypeError(env, std::string("spawn: a packed ") + key +
                            " must end with a NUL byte and hold its count of strings");
  }
  list->pointers.reserve(expected + 1);
  char* end = at + length;
  while (at < end && list->pointers.size() < expected) {
    list->pointers.push_back(at);
    // The last byte is NUL: memchr always finds one.
    at = static_cast<char*>(std::memchr(at, '\0', static_cast<size_t>(end - at))) + 1;
  }
  if (list->pointers.size() != expected || at != end) {
    ThrowTypeError(env, std::string("spawn: the packed ") + key + " does not hold " + key +
                            "Count strings (a string contains a NUL byte?)");
  }
  list->pointers.push_back(nullptr);
}

// `count` is read only for a packed list (from `counts` at key + "Count"
// when `count` is null: the options object's form).
void ReadList(Napi::Env env, Napi::Value value, Napi::Value count, Napi::Object counts,
              const char* key, bool non_empty, CStringList* list) {
  // Exactly a Uint8Array (a Buffer): IsBuffer() also accepts any other view.
  if (value.IsTypedArray() && value.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    if (count.IsEmpty()) count = counts.Get(std::string(key) + "Count");
    ReadPacked(env, value.As<Napi::Buffer<char>>(), count, key, non_empty, list);
    return;
  }
  if (!value.IsArray()) {
    ThrowTypeError(env, std::string("spawn: ") + key + " must be an array or a packed Buffer");
  }
  Napi::Array array = value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (non_empty && length == 0) {
    ThrowTypeError(env, std::string("spawn: ") + key + " must not be empty");
  }
  // No reserve(length): a sparse array can claim 2^32 - 1 elements and fail
  // at its first hole, so memory grows only with the elements really read.
  for (uint32_t i = 0; i < length; ++i) {
    list->storage.push_back(
        StringOf(env, array.Get(i), std::string("spawn: ") + key + "[" + std::to_string(i) + "]"));
  }
  list->pointers.reserve(list->storage.size() + 1);
  for (std::string& s : list->storage) list->pointers.push_back(s.data());
  list->pointers.push_back(nullptr);
}

// Linux never allows more open fds than fs.nr_open's ceiling (2^20 by
// default), so a longer stdio list can only fail; refusing it up front also
// keeps a sparse 2^32 - 1 element array from sizing an allocation.
constexpr uint32_t kMaxStdioSlots = 1u << 20;

std::vector<int> ReadStdio(Napi::Env env, Napi::Value value) {
  if (!value.IsArray()) ThrowTypeError(env, "spawn: stdio must be an array of fds");
  Napi::Array array = value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (length < 3) ThrowTypeError(env, "spawn: stdio must have at least 3 slots");
  if (length > kMaxStdioSlots) {
    ThrowTypeError(env,
                   "spawn: stdio must have at most " + std::to_string(kMaxStdioSlots) + " slots");
  }
  std::vector<int> fds;
  for (uint32_t i = 0; i < length; ++i) {
    Napi::Value slot = array.Get(i);
    if (!slot.IsNumber()) ThrowTypeError(env, "spawn: stdio entries must be integers");
    double fd = slot.As<Napi::Number>().DoubleValue();
    // Range first: converting NaN or an out-of-range double to an integer is undefined.
    if (!(fd >= kPipeSlot && fd <= INT_MAX) || fd != std::trunc(fd)) {
      ThrowTypeError(env, "spawn: stdio entries must be fds, -1 or -2 (integers >= -2)");
    }
    fds.push_back(static_cast<int>(fd));
  }
  return fds;
}

}  // namespace

OwnedFds::~OwnedFds() {
  for (int fd : fds) {
    if (fd >= 0) close_fd(fd);
  }
}

OwnedFd::~OwnedFd() {
  if (fd >= 0) close_fd(fd);
}

bool OptionalBool(Napi::Env env, Napi::Object options, const char* key) {
  Napi::Value value = options.Get(key);
  if (value.IsUndefined()) return false;
  if (!value.IsBoolean()) ThrowTypeError(env, std::string("spawn: ") + key + " must be a boolean");
  return value.As<Napi::Boolean>().Value();
}

namespace {

void ReadFile(Napi::Env env, Napi::Value file_value, SpawnArgs* args) {
  if (!file_value.IsString()) ThrowTypeError(env, "spawn: file must be a string");
  args->file = StringOf(env, file_value, "spawn: file");
  if (args->file.empty() || args->file[0] != '/') {
    ThrowTypeError(env, "spawn: file must be an absolute path");
  }
}

void ReadCwd(Napi::Env env, Napi::Value cwd_value, SpawnArgs* args) {
  if (!cwd_value.IsUndefined() && !cwd_value.IsNull()) {
    if (!cwd_value.IsString()) ThrowTypeError(env, "spawn: cwd must be a string");
    args->cwd = StringOf(env, cwd_value, "spawn: cwd");
    args->has_cwd = true;
  }
}

// controls, sandbox and contain: each one sends the child through the child path.
void ReadChildSteps(Napi::Env env, Napi::Object options, SpawnArgs* args) {
  args->child_path = ReadExecControls(env, options, &args->controls);
  args->sandboxed = ReadSandbox(env, options, &args->sandbox);
  args->child_path = args->child_path || args->sandboxed;
  args->contained = ReadContain(env, options, &args->contain);
  args->child_path = args->child_path || args->contained;
}

}  // namespace

void ReadSpawnArgs(Napi::Env env, Napi::Object options, SpawnArgs* args) {
  ReadFile(env, options.Get("file"), args);
  ReadList(env, options.Get("argv"), Napi::Value(), options, "argv", true, &args->argv);
  ReadList(env, options.Get("envp"), Napi::Value(), options, "envp", false, &args->envp);
  ReadCwd(env, options.Get("cwd"), args);
  args->stdio = ReadStdio(env, options.Get("stdio"));
  args->setsid = OptionalBool(env, options, "setsid");
  args->setpgroup = OptionalBool(env, options, "setpgroup");
  ReadChildSteps(env, options, args);
}

void ReadPositionalSpawnArgs(Napi::Env env, const Napi::CallbackInfo& info, SpawnArgs* args) {
  ReadFile(env, info[kArgFile], args);
  ReadList(env, info[kArgArgv], info[kArgArgvCount], Napi::Object(), "argv", true, &args->argv);
  ReadList(env, info[kArgEnvp], info[kArgEnvpCount], Napi::Object(), "envp", false, &args->envp);
  ReadCwd(env, info[kArgCwd], args);
  args->stdio = ReadStdio(env, info[kArgStdio]);
  Napi::Value flags_value = info[kArgFlags];
  double flags = flags_value.IsNumber() ? flags_value.As<Napi::Number>().DoubleValue() : -1;
  if (!(flags >= 0 && flags <= kSpawnFlagsAll) || flags != std::trunc(flags)) {
    ThrowTypeError(env, "spawn: flags must be an integer of the spawn flag bits");
  }
  const int bits = static_cast<int>(flags);
  args->setsid = (bits & kSpawnSetsid) != 0;
  args->setpgroup = (bits & kSpawnSetpgroup) != 0;
  Napi::Value more = info[kArgMore];
  if (!more.IsUndefined()) {
    if (!more.IsObject()) ThrowTypeError(env, "spawn: the last argument must be an object");
    ReadChildSteps(env, more.As<Napi::Object>(), args);
  }
  // The child path unless posix_spawn was asked for a child without steps.
  args->child_path = args->child_path || (bits & kSpawnPosixSpawn) == 0;
}

StartedChild::~StartedChild() { end_step_cgroup(&cgroup, 1000, nullptr); }

namespace {

// The path a failure names: the helper's for a failure of step "helper".
const std::string* FailurePath(const ChildPathFailure& failure, const SpawnArgs& args,
                               std::string* helper) {
  if (std::strcmp(failure.step, "helper") == 0) {
    const char* path = nullptr;
    StepFailure ignored;
    helper_run(&path, &ignored);
    *helper = path;
    return helper;
  }
  return &StartFailurePath(failure, args.file, args.cwd);
}

}  // namespace

void StartChild(Napi::Env env, SpawnArgs& args, StartedChild* child) {
  // From here to the spawn no JavaScript runs.
  ResolvePacked(env, "argv", &args.argv);
  ResolvePacked(env, "envp", &args.envp);
  if (args.sandboxed) {
    PrepareSandbox(env, &args.sandbox);
    args.controls.controls.sandbox = &args.sandbox.plan;
  }
  // Every check is done: the step's cgroup first (nothing to undo if it fails).
  if (args.contained && args.contain.pid_namespace != PidNamespace::kNone) {
    args.controls.controls.pid_namespace = args.contain.pid_namespace;
  } else if (args.contained) {
    MakeContainment(env, &args.contain, &child->cgroup);
  }
  // Then the pipes. Both owners close what they still
  // hold on every way out (the child's ends always, the parent's on failure).
  // Without a pipe the slots go to the child as given: no copy.
  bool any_pipe = false;
  for (int slot : args.stdio) any_pipe = any_pipe || slot == kPipeSlot;
  std::vector<int> stdio;
  if (any_pipe) stdio = args.stdio;
  OwnedFds child_ends(stdio.size());
  for (size_t i = 0; i < stdio.size(); ++i) {
    if (stdio[i] != kPipeSlot) continue;
    int fds[2];
    int err = make_pipe(fds);
    if (err < 0) throw SystemError(env, {err, "pipe2", "stdio"});
    child->parent_ends.fds[i] = i == 0 ? fds[1] : fds[0];
    child_ends.fds[i] = i == 0 ? fds[0] : fds[1];
    stdio[i] = child_ends.fds[i];
  }

  SpawnRequest request;
  request.file = args.file.c_str();
  request.argv = args.argv.pointers.data();
  request.envp = args.envp.pointers.data();
  request.cwd = args.has_cwd ? args.cwd.c_str() : nullptr;
  const std::vector<int>& slots = any_pipe ? stdio : args.stdio;
  request.stdio = slots.data();
  request.stdio_count = slots.size();
  request.new_session = args.setsid;
  request.new_process_group = args.setpgroup;
  request.cgroup_fd = child->cgroup.dir_fd;  // -1 unless contained
  request.pidfd = &child->pidfd.fd;

  ChildPathFailure failure;
  int err = args.child_path ? spawn_child_path(request, args.controls.controls, &child->pid,
                                               &child->start_status.fd, &failure)
                            : spawn_process(request, &child->pid);
  // The child has entered the cgroup (or has its own copy of the fd).
  if (child->cgroup.dir_fd >= 0) close_fd(child->cgroup.dir_fd);
  child->cgroup.dir_fd = -1;
  if (err < 0) {
    if (!args.child_path) throw SystemError(env, {err, "posix_spawn", "spawn"}, &args.file);
    std::string helper;
    throw SystemError(env, {err, failure.syscall, failure.step},
                      FailurePath(failure, args, &helper));
  }
}

const std::string& StartFailurePath(const ChildPathFailure& failure, const std::string& file,
                                    const std::string& cwd) {
  if (!failure.path.empty()) return failure.path;
  return std::strcmp(failure.syscall, "chdir") == 0 ? cwd : file;
}

void ThrowIfStartFailed(Napi::Env env, const SpawnArgs& args, StartedChild* child,
                        ChildExit* exit) {
  int& fd = child->start_status.fd;
  if (fd < 0) return;
  ChildPathFailure failure;
  int err = read_start_status(fd, &failure, exit);
  close_fd(fd);
  fd = -1;
  if (err < 0) {
    std::string helper;
    throw SystemError(env, {err, failure.syscall, failure.step},
                      FailurePath(failure, args, &helper));
  }
}

}  // namespace exactspawn
