// fork() in a process under the checker.
//
//  * fork + exec: the child inherits LD_PRELOAD and the checker's options and
//    runs CUDA itself; it is checked as a process of its own.
//  * fork without exec: the child must not touch CUDA (the driver forbids
//    it), and the checker it inherited must neither hang in the child's
//    exit handlers nor print a second report for the parent's history.
//
// Usage: fork_exec            the parent
//        fork_exec child      the exec'd child (CUDA work of its own)
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "fault_common.h"

namespace {

constexpr int kN = 2048;

long long cuda_work(int rounds) {
  cudaStream_t a, b;
  FAULT_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  int* accumulator = nullptr;
  FAULT_CHECK(cudaMalloc(&accumulator, sizeof(int) * kN));
  FAULT_CHECK(cudaMemsetAsync(accumulator, 0, sizeof(int) * kN, b));
  for (int round = 1; round <= rounds; ++round) ordered_round_trip(a, b, accumulator, kN, round);
  long long sum = device_sum(accumulator, kN, b);
  FAULT_CHECK(cudaFree(accumulator));
  FAULT_CHECK(cudaStreamDestroy(a));
  FAULT_CHECK(cudaStreamDestroy(b));
  return sum;
}

void describe(const char* who, int status) {
  if (WIFEXITED(status))
    std::printf("%s exited with %d\n", who, WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    std::printf("%s killed by signal %d\n", who, WTERMSIG(status));
  else
    std::printf("%s ended oddly\n", who);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "child") == 0) {
    std::printf("exec child: checksum %lld\n", cuda_work(3));
    std::fflush(stdout);
    return 7;
  }

  std::printf("parent before fork: checksum %lld\n", cuda_work(2));
  std::fflush(stdout);  // or the children would print it again

  pid_t exec_child = fork();
  if (exec_child < 0) {
    std::perror("fork");
    return 1;
  }
  if (exec_child == 0) {
    char self[] = "/proc/self/exe";
    char child_arg[] = "child";
    char* child_argv[] = {argv[0], child_arg, nullptr};
    execv(self, child_argv);
    _exit(127);
  }
  int status = 0;
  waitpid(exec_child, &status, 0);
  describe("exec child", status);
  std::fflush(stdout);

  pid_t plain_child = fork();
  if (plain_child < 0) {
    std::perror("fork");
    return 1;
  }
  if (plain_child == 0) {
    std::printf("forked child: no CUDA here\n");
    std::fflush(stdout);
    std::exit(9);  // runs the inherited atexit handlers
  }
  waitpid(plain_child, &status, 0);
  describe("forked child", status);

  std::printf("parent after fork: checksum %lld\n", cuda_work(4));
  return 0;
}
