/* A stand-in libcupti (XSC_CUPTI_LIB) whose subscription succeeds and which
   never calls back: the runtime stays active, as on a machine with a GPU,
   while the program makes no CUDA call. */
int cuptiSubscribe(void** subscriber, void* callback, void* userdata) {
  (void)callback;
  (void)userdata;
  *subscriber = (void*)1;
  return 0;
}
int cuptiUnsubscribe(void* subscriber) { (void)subscriber; return 0; }
int cuptiEnableCallback(unsigned enable, void* subscriber, int domain, unsigned cbid) {
  (void)enable; (void)subscriber; (void)domain; (void)cbid;
  return 0;
}
int cuptiGetResultString(int result, const char** text) { (void)result; *text = "stand-in"; return 0; }
