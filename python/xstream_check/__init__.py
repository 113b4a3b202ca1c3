"""xstream-check: finds buffers freed on one CUDA stream while another stream
may still use them."""
