"""How results are shown: figures (:mod:`.figures`), readable tables (:mod:`.show`) and the building
blocks of the generated "what we found" sentences (:mod:`.sentences`)."""
