/* A stand-in for libcudnn's graph API (cudnnBackend*), built together with
 * fake_cudnn.c (the handle and its stream). Its descriptors remember only
 * their type and whether they are finalized; its calls touch no device
 * memory. As cuDNN does, it refuses (CUDNN_STATUS_BAD_PARAM) a null
 * descriptor, an attribute set on a finalized descriptor, a link to a
 * descriptor not finalized, and an execute whose plan is not finalized.
 * cudnnBackendGetAttribute answers CUDNN_ATTR_ENGINEHEUR_RESULTS with up to
 * two engine configs, which it finalizes. Destroyed descriptors are
 * reused, the last one first, so that a test can build a new descriptor
 * at an address that an old one had. cudnnBackendExecute remembers its
 * pointer arguments in fake_cudnn_last and returns success, or the status
 * in $FAKE_CUDNN_STATUS. */
#include <stdlib.h>

#include <cudnn.h>

struct fake_backend_descriptor {
  cudnnBackendDescriptorType_t type;
  int finalized;
  struct fake_backend_descriptor* next_free;
};

#define FAKE_CUDNN_MAX_ARGS 16
struct fake_cudnn_call {
  const char* name;
  int count;
  const void* args[FAKE_CUDNN_MAX_ARGS];
};
extern struct fake_cudnn_call fake_cudnn_last;

static struct fake_backend_descriptor* free_list;

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                           cudnnBackendDescriptor_t* descriptor) {
  if (descriptor == NULL) return CUDNN_STATUS_BAD_PARAM;
  struct fake_backend_descriptor* d = free_list;
  if (d != NULL) {
    free_list = d->next_free;
  } else {
    d = malloc(sizeof *d);
    if (d == NULL) return CUDNN_STATUS_ALLOC_FAILED;
  }
  d->type = type;
  d->finalized = 0;
  d->next_free = NULL;
  *descriptor = d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  struct fake_backend_descriptor* d = descriptor;
  if (d == NULL) return CUDNN_STATUS_BAD_PARAM;
  d->next_free = free_list;
  free_list = d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count,
                                       const void* elements) {
  (void)name;
  struct fake_backend_descriptor* d = descriptor;
  if (d == NULL || d->finalized || elements == NULL || count < 0) return CUDNN_STATUS_BAD_PARAM;
  if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
    struct fake_backend_descriptor* const* links = elements;
    for (int64_t i = 0; i < count; ++i)
      if (links[i] == NULL || !links[i]->finalized) return CUDNN_STATUS_BAD_PARAM;
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  struct fake_backend_descriptor* d = descriptor;
  if (d == NULL || d->finalized) return CUDNN_STATUS_BAD_PARAM;
  d->finalized = 1;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested,
                                       int64_t* count, void* elements) {
  struct fake_backend_descriptor* d = descriptor;
  if (d == NULL || count == NULL || !d->finalized) return CUDNN_STATUS_BAD_PARAM;
  if (name != CUDNN_ATTR_ENGINEHEUR_RESULTS || type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
    return CUDNN_STATUS_NOT_SUPPORTED;
  const int64_t results = 2;
  if (elements == NULL) {
    *count = results;
    return CUDNN_STATUS_SUCCESS;
  }
  struct fake_backend_descriptor** configs = elements;
  int64_t n = 0;
  for (; n < requested && n < results; ++n) {
    if (configs[n] == NULL || configs[n]->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
      return CUDNN_STATUS_BAD_PARAM;
    configs[n]->finalized = 1;
  }
  *count = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                  cudnnBackendDescriptor_t pack) {
  fake_cudnn_last.name = "cudnnBackendExecute";
  fake_cudnn_last.count = 3;
  fake_cudnn_last.args[0] = handle;
  fake_cudnn_last.args[1] = plan;
  fake_cudnn_last.args[2] = pack;
  const struct fake_backend_descriptor* p = plan;
  if (handle == NULL || p == NULL || pack == NULL || !p->finalized ||
      p->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    return CUDNN_STATUS_BAD_PARAM;
  const char* forced = getenv("FAKE_CUDNN_STATUS");
  return forced != NULL ? (cudnnStatus_t)atoi(forced) : CUDNN_STATUS_SUCCESS;
}
