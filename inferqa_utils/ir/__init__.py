"""The information-retrieval vocabulary shared by every stage: the data model (:mod:`.datamodel`),
answer normalisation (:mod:`.textnorm`), TREC files and in-memory runs (:mod:`.trec`, :mod:`.runs`),
BM25 (:mod:`.lexical`) and the question-type classifier (:mod:`.qtype`)."""
