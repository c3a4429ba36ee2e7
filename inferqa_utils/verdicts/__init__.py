"""What every stage's results add up to: the papers' findings scored from our data
(:mod:`.findings`), the reproduction matrix checked against a run (:mod:`.check`) and the results
page (:mod:`.results_page`)."""
