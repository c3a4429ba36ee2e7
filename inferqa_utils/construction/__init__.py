"""Dataset construction (paper 000 §3): from a question/hint source to a labelled QUIT-style corpus."""
