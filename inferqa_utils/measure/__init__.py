"""How a number is measured and judged: per-question retrieval metrics (:mod:`.metrics`), their
intervals and paired tests (:mod:`.uncertainty`), the verdict rule (:mod:`.verdict`) and the source
papers' numbers they are compared with (:mod:`.paper`)."""
