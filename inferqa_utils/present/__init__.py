"""How results are shown: figures (:mod:`.figures`), readable tables (:mod:`.show`), the p-value
format and the Markdown table writer of the results page (:mod:`.tables`) and the building blocks of
the generated "what we found" sentences (:mod:`.sentences`)."""
