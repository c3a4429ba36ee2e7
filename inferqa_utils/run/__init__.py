"""Running the numbered notebooks headlessly: the runner (:mod:`.runner`), notebook parameters and
their checks (:mod:`.notebook_params`), how each kernel ended (:mod:`.kernels`) and the dataset
release command (:mod:`.make_release`)."""
