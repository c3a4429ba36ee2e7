"""Teaching helpers over the built stages: notebook 00's walk-through (:mod:`.quickstart`), the class
in a box (:mod:`.classroom`) and the question inspector (:mod:`.inspector`)."""
