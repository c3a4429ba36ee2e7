"""What a run leaves behind about itself: run manifests (:mod:`.manifest`), which run wrote each
output (:mod:`.provenance`), run folders (:mod:`.run_dirs`), the ledger of what each analysis spent
(:mod:`.ledger`) and the projection of a run's time on this host (:mod:`.projection`)."""
