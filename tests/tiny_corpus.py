"""A ten-passage corpus shared by the retrieval tests (topics never overlap, so each query has one answer)."""

CORPUS = {
    "p0": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
    "p1": "Mount Everest is Earth's highest mountain above sea level, in the Himalayas.",
    "p2": "The Great Wall of China is a series of fortifications built across northern China.",
    "p3": "Penguins are flightless birds living almost exclusively in the Southern Hemisphere.",
    "p4": "The Amazon river in South America is the largest river by discharge volume of water.",
    "p5": "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "p6": "Paris is the capital and most populous city of France, on the river Seine.",
    "p7": "The violin is a wooden string instrument played with a bow.",
    "p8": "Jupiter is the largest planet in the Solar System and a gas giant.",
    "p9": "Chess is a board game for two players on a checkered board of 64 squares.",
}
