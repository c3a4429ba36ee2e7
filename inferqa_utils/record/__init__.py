"""What a run leaves behind about itself: run manifests (:mod:`.manifest`), run folders
(:mod:`.run_dirs`) and the tables and figures in them (:mod:`.run_outputs`), the ledger of what
each analysis spent (:mod:`.ledger`) and the projection of a run's time on this host
(:mod:`.projection`)."""
