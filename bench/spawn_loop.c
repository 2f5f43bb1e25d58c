// spawn_loop.c — the C anchor of the spawn benchmarks: posix_spawn(3) of a
// program COUNT times with the same attributes exactspawn uses (empty
// signal mask, default dispositions, stdio dup2'ed, every other fd closed),
// INFLIGHT children at a time, optionally holding HOLD_MIB of touched memory.
// Usage: spawn_loop ignore|capture COUNT INFLIGHT HOLD_MIB PROGRAM
//          [ENV_COUNT ENV_BYTES [ARGV_COUNT ARGV_BYTES]]
// The optional envp is ENV_COUNT strings "V%05d=xxx…" of ENV_BYTES bytes each
// (NUL not counted) and the optional extra argv ARGV_COUNT strings of
// ARGV_BYTES 'a's: bench/run.mjs builds the same ones for its own side.
// Prints the elapsed wall time and this process's own CPU time, in nanoseconds.
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static posix_spawnattr_t attr;
static char* empty_env[] = {NULL};
static char** child_env = empty_env;
static char** child_argv;

static char* filled(size_t bytes, char fill) {
  char* s = malloc(bytes + 1);
  if (s == NULL) exit(4);
  memset(s, fill, bytes);
  s[bytes] = '\0';
  return s;
}

static void build_env(long count, long bytes) {
  child_env = calloc((size_t)count + 1, sizeof(char*));
  if (child_env == NULL) exit(4);
  for (long i = 0; i < count; i++) {
    char* s = filled((size_t)bytes, 'x');
    char name[16];
    int n = snprintf(name, sizeof name, "V%05ld=", i);
    if (n > bytes) exit(5);
    memcpy(s, name, (size_t)n);
    child_env[i] = s;
  }
}

static void build_argv(const char* program, long count, long bytes) {
  child_argv = calloc((size_t)count + 2, sizeof(char*));
  if (child_argv == NULL) exit(4);
  child_argv[0] = (char*)program;
  for (long i = 0; i < count; i++) child_argv[i + 1] = filled((size_t)bytes, 'a');
}

static pid_t start(const char* program, int capture, int out[2], int err[2]) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
  if (capture) {
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) exit(2);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_RDWR, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_RDWR, 0);
  }
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  pid_t pid;
  if (posix_spawn(&pid, program, &fa, &attr, child_argv, child_env) != 0) exit(3);
  posix_spawn_file_actions_destroy(&fa);
  if (capture) {
    close(out[1]);
    close(err[1]);
  }
  return pid;
}

static void drain(int fd) {
  char buf[4096];
  while (read(fd, buf, sizeof buf) > 0) {
  }
  close(fd);
}

int main(int argc, char** argv) {
  if (argc < 6) return 1;
  int capture = strcmp(argv[1], "capture") == 0;
  long count = atol(argv[2]);
  long inflight = atol(argv[3]);
  long hold_mib = atol(argv[4]);
  const char* program = argv[5];
  if (argc >= 8) build_env(atol(argv[6]), atol(argv[7]));
  build_argv(program, argc >= 10 ? atol(argv[8]) : 0, argc >= 10 ? atol(argv[9]) : 0);
  if (hold_mib > 0) {
    size_t bytes = (size_t)hold_mib << 20;
    char* hold = malloc(bytes);
    if (hold == NULL) return 4;
    memset(hold, 1, bytes);
  }
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  struct timespec t0, t1, c0, c1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  long started = 0, done = 0;
  int out[2], err[2];
  while (done < count) {
    while (started < count && started - done < inflight) {
      pid_t pid = start(program, capture, out, err);
      started++;
      if (capture) {
        drain(out[0]);
        drain(err[0]);
        int status;
        waitpid(pid, &status, 0);
        done++;
      }
    }
    if (!capture && done < started) {
      int status;
      if (waitpid(-1, &status, 0) > 0) done++;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  long long ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
  long long cpu = (long long)(c1.tv_sec - c0.tv_sec) * 1000000000LL + (c1.tv_nsec - c0.tv_nsec);
  printf("%lld %lld\n", ns, cpu);
  return 0;
}
