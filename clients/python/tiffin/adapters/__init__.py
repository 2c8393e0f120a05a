"""Plug-ins for inference engines: SGLang HiCache (``sglang``) and LMCache (``lmcache``)."""
