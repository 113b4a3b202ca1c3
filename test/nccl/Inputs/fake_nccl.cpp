// A stand-in for libnccl.so.2 that runs no GPU work: every entry point
// prints its arguments and returns the status named by FAKE_NCCL_RESULT
// (default ncclSuccess), so a test can see that calls and results pass
// through the interposers untouched.
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

namespace {

ncclResult_t result() {
  const char* text = std::getenv("FAKE_NCCL_RESULT");
  return text != nullptr ? static_cast<ncclResult_t>(std::atoi(text)) : ncclSuccess;
}

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atoi(text) : fallback;
}

}  // namespace

#define FAKE extern "C" __attribute__((visibility("default")))

FAKE ncclResult_t ncclCommCount(const ncclComm_t, int* count) {
  *count = env_int("FAKE_NCCL_NRANKS", 4);
  return ncclSuccess;
}

FAKE ncclResult_t ncclCommUserRank(const ncclComm_t, int* rank) {
  *rank = env_int("FAKE_NCCL_RANK", 0);
  return ncclSuccess;
}

FAKE ncclResult_t ncclAllReduce(const void* s, void* r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                                ncclComm_t c, cudaStream_t st) {
  std::printf("real ncclAllReduce(%p, %p, %zu, %d, %d, %p, %p)\n", s, r, n, int(t), int(op),
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclAllGather(const void* s, void* r, size_t n, ncclDataType_t t, ncclComm_t c,
                                cudaStream_t st) {
  std::printf("real ncclAllGather(%p, %p, %zu, %d, %p, %p)\n", s, r, n, int(t),
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclReduceScatter(const void* s, void* r, size_t n, ncclDataType_t t,
                                    ncclRedOp_t op, ncclComm_t c, cudaStream_t st) {
  std::printf("real ncclReduceScatter(%p, %p, %zu, %d, %d, %p, %p)\n", s, r, n, int(t), int(op),
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclBroadcast(const void* s, void* r, size_t n, ncclDataType_t t, int root,
                                ncclComm_t c, cudaStream_t st) {
  std::printf("real ncclBroadcast(%p, %p, %zu, %d, %d, %p, %p)\n", s, r, n, int(t), root,
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclBcast(void* b, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                            cudaStream_t st) {
  std::printf("real ncclBcast(%p, %zu, %d, %d, %p, %p)\n", b, n, int(t), root,
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclReduce(const void* s, void* r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                             int root, ncclComm_t c, cudaStream_t st) {
  std::printf("real ncclReduce(%p, %p, %zu, %d, %d, %d, %p, %p)\n", s, r, n, int(t), int(op), root,
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclSend(const void* s, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                           cudaStream_t st) {
  std::printf("real ncclSend(%p, %zu, %d, %d, %p, %p)\n", s, n, int(t), peer,
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclRecv(void* r, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                           cudaStream_t st) {
  std::printf("real ncclRecv(%p, %zu, %d, %d, %p, %p)\n", r, n, int(t), peer,
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclAlltoAll(const void* s, void* r, size_t n, ncclDataType_t t, ncclComm_t c,
                               cudaStream_t st) {
  std::printf("real ncclAlltoAll(%p, %p, %zu, %d, %p, %p)\n", s, r, n, int(t),
              static_cast<void*>(c), static_cast<void*>(st));
  return result();
}

FAKE ncclResult_t ncclGroupStart() {
  std::printf("real ncclGroupStart()\n");
  return result();
}

FAKE ncclResult_t ncclGroupEnd() {
  std::printf("real ncclGroupEnd()\n");
  return result();
}
