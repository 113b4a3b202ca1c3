// Measures what host_guard=1 (runtime/host_guard.cpp) rests on: that the
// pages of pinned host memory can be mprotect-ed, that a host access to a
// protected page faults (and the program can go on once the handler
// unprotects it), and that cudaMemcpyAsync to and from those pages still
// moves the right bytes while they are protected (DMA does not go through
// the CPU's page tables), for each way of getting pinned memory.
//
//   nvcc -O2 -o host_guard_probe test/gpu/probes/host_guard_probe.cu && ./host_guard_probe
//
// One line per case:
//   <allocator> <direction> protect=<PROT_READ|PROT_NONE> mprotect=<rc>[ errno=<e>]
//     fault=<yes|no|skipped> copy=<ok|bad|error: ...> unprotect=<rc>
// H2D: the source is made read-only (what the guard does to a pending
// upload's source) and a host read of it must not fault, a host write must;
// D2H: the destination is made inaccessible and a host read must fault.
// The copy runs with the protection in place; the bytes are compared
// after the stream is synchronized and the pages made writable again.
// Exit status 0 when every case had mprotect=0, the expected faults and
// copy=ok; 1 otherwise.
#include <cuda_runtime.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kBytes = std::size_t(4) << 20;  // 4 MiB: 1024 pages

#define PROBE_CHECK(call)                                                            \
  do {                                                                               \
    cudaError_t err_ = (call);                                                       \
    if (err_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                   cudaGetErrorString(err_));                                        \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

sigjmp_buf fault_jump;
volatile sig_atomic_t faulted = 0;

void on_segv(int, siginfo_t*, void*) {
  faulted = 1;
  siglongjmp(fault_jump, 1);
}

// Whether reading (writing) the byte at `p` faults: the handler jumps back
// here instead of letting the instruction run again.
bool read_faults(volatile unsigned char* p) {
  faulted = 0;
  if (sigsetjmp(fault_jump, 1) == 0) {
    unsigned char v = *p;
    (void)v;
  }
  return faulted != 0;
}

bool write_faults(volatile unsigned char* p) {
  faulted = 0;
  if (sigsetjmp(fault_jump, 1) == 0) p[0] = 0x11;
  return faulted != 0;
}

unsigned char pattern(std::size_t i, unsigned seed) {
  return static_cast<unsigned char>((i * 131u + seed) & 0xff);
}

struct Pinned {
  const char* name;
  unsigned char* ptr = nullptr;
  void* raw = nullptr;  // cudaHostRegister: the mmap'ed memory
};

Pinned allocate(const std::string& how) {
  Pinned p{how == "cudaHostAlloc" ? "cudaHostAlloc"
           : how == "cudaMallocHost" ? "cudaMallocHost" : "cudaHostRegister"};
  if (how == "cudaHostAlloc") {
    PROBE_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&p.ptr), kBytes, cudaHostAllocDefault));
  } else if (how == "cudaMallocHost") {
    PROBE_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p.ptr), kBytes));
  } else {
    p.raw = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p.raw == MAP_FAILED) {
      std::perror("mmap");
      std::exit(2);
    }
    p.ptr = static_cast<unsigned char*>(p.raw);
    std::memset(p.ptr, 0, kBytes);
    PROBE_CHECK(cudaHostRegister(p.ptr, kBytes, cudaHostRegisterDefault));
  }
  return p;
}

void release(Pinned& p) {
  if (p.raw != nullptr) {
    PROBE_CHECK(cudaHostUnregister(p.ptr));
    munmap(p.raw, kBytes);
  } else {
    PROBE_CHECK(cudaFreeHost(p.ptr));
  }
}

// One case; true when it went as host_guard needs.
bool run_case(const std::string& how, bool h2d, cudaStream_t stream, unsigned char* device) {
  Pinned p = allocate(how);
  std::vector<unsigned char> check(kBytes);
  const unsigned seed = h2d ? 7u : 13u;
  if (h2d) {
    for (std::size_t i = 0; i < kBytes; ++i) p.ptr[i] = pattern(i, seed);
    PROBE_CHECK(cudaMemset(device, 0, kBytes));
  } else {
    std::memset(p.ptr, 0, kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) check[i] = pattern(i, seed);
    PROBE_CHECK(cudaMemcpy(device, check.data(), kBytes, cudaMemcpyHostToDevice));
  }
  PROBE_CHECK(cudaDeviceSynchronize());

  const int prot = h2d ? PROT_READ : PROT_NONE;
  const int rc = mprotect(p.ptr, kBytes, prot);
  const int protect_errno = rc != 0 ? errno : 0;
  std::string fault = "skipped";
  bool fault_ok = true;
  if (rc == 0) {
    // The last page, so that a fault there does not hide behind the first.
    volatile unsigned char* last = p.ptr + kBytes - 1;
    if (h2d) {
      const bool read_faulted = read_faults(last);
      const bool write_faulted = write_faults(last);
      fault = std::string(read_faulted ? "read" : "") + (write_faulted ? "write" : "");
      if (fault.empty()) fault = "no";
      fault_ok = !read_faulted && write_faulted;
    } else {
      const bool read_faulted = read_faults(last);
      fault = read_faulted ? "yes" : "no";
      fault_ok = read_faulted;
    }
  }

  std::string copy;
  cudaError_t err = h2d ? cudaMemcpyAsync(device, p.ptr, kBytes, cudaMemcpyHostToDevice, stream)
                        : cudaMemcpyAsync(p.ptr, device, kBytes, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  const int unprotect = mprotect(p.ptr, kBytes, PROT_READ | PROT_WRITE);
  if (err != cudaSuccess) {
    copy = std::string("error: ") + cudaGetErrorString(err);
  } else {
    bool same = true;
    if (h2d) {
      PROBE_CHECK(cudaMemcpy(check.data(), device, kBytes, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < kBytes && same; ++i) same = check[i] == pattern(i, seed);
    } else {
      for (std::size_t i = 0; i < kBytes && same; ++i) same = p.ptr[i] == pattern(i, seed);
    }
    copy = same ? "ok" : "bad";
  }
  std::printf("%-16s %s protect=%s mprotect=%d", p.name, h2d ? "H2D" : "D2H",
              h2d ? "PROT_READ" : "PROT_NONE", rc);
  if (rc != 0) std::printf(" errno=%s", std::strerror(protect_errno));
  std::printf(" fault=%s copy=%s unprotect=%d\n", fault.c_str(), copy.c_str(), unprotect);
  std::fflush(stdout);
  release(p);
  return rc == 0 && fault_ok && copy == "ok" && unprotect == 0;
}

}  // namespace

int main() {
  struct sigaction action {};
  action.sa_sigaction = on_segv;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &action, nullptr);

  cudaStream_t stream;
  PROBE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned char* device = nullptr;
  PROBE_CHECK(cudaMalloc(&device, kBytes));
  std::printf("page size %ld, %zu bytes per case\n", sysconf(_SC_PAGESIZE), kBytes);
  bool all = true;
  for (const char* how : {"cudaHostAlloc", "cudaMallocHost", "cudaHostRegister"})
    for (bool h2d : {true, false}) all = run_case(how, h2d, stream, device) && all;
  PROBE_CHECK(cudaFree(device));
  PROBE_CHECK(cudaStreamDestroy(stream));
  std::printf("%s\n", all ? "all cases as host_guard needs" : "some cases differ");
  return all ? 0 : 1;
}
