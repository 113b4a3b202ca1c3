/* A stand-in libcuda.so.1 whose cuStreamGetFlags reads the stream object
   without validating the handle, as the real driver does. */
int cuStreamGetFlags(void* stream, unsigned* flags) {
  *flags = *(volatile unsigned*)stream;
  return 0;
}
