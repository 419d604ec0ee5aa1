"""Helpers of tools/hf_parity.py (libbosch-torch against Hugging Face transformers).

child      libbosch-torch through ctypes; runs in a child process and never
           imports torch (a pip PyTorch and the libtorch the backend links
           must not share one process)
reference  the transformers side: per-(layer, KV group) sliding-window
           attention registered in transformers' attention registry, models,
           greedy decoding
scores     the evaluator's scores (LOGPROB, EXACT, MATCH) recomputed from
           transformers' logits, and the small tasks they are measured on
"""
