"""Foundations every other part of the package stands on, importing nothing above them: paths,
seeds and profiles (:mod:`.config`), error types (:mod:`.errors`), atomic writes (:mod:`.atomic`),
UTF-8 reading (:mod:`.textio`), fingerprints and the artifact store (:mod:`.fingerprint`,
:mod:`.artifacts`), hub access (:mod:`.hub`), the model registry (:mod:`.models`) and plugged-in
components (:mod:`.plugins`)."""
