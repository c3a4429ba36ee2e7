"""Rule-based TREC question-type classifier (paper 000 §3.1.3).

Implements the *question type* part of paper 000 §3.1.3: every question gets a
TREC ``COARSE:fine`` label in the Li & Roth (2002) taxonomy, e.g. ``HUM:ind``, ``LOC:country``,
``NUM:date``, ``ENTY:animal``, ``ABBR:exp``, ``DESC:def``. The paper uses a rule-based classifier;
this is our own, with no model and no network:

1. fixed patterns first (``what does X stand for`` → ``ABBR:exp``, ``how many`` → ``NUM:count``,
   ``when`` → ``NUM:date``, ``where`` → ``LOC:other``, ``why`` → ``DESC:reason`` …);
2. otherwise the *wh-phrase* is located (``which|what|name …`` plus the following words up to the
   first function word, or the noun after ``the name of the …``) and its head noun is looked up in
   keyword lexicons, rightmost match first (``which capital city`` → ``city`` → ``LOC:city``);
3. words that look like person nouns (``-ist``, ``-ian``, ``-er`` …) give ``HUM:ind``;
4. otherwise a fallback per wh-word (``who`` → ``HUM:ind``, ``what``/``which`` → ``ENTY:other``).

Empty or non-text input (or text without letters) returns :data:`FALLBACK` (``"DESC:desc"``);
:func:`classify_question` never raises.

Tuned on TriviaHG ``validation_2024.json`` (1,000 questions; gold labels are TriviaHG's own,
themselves machine-assigned and somewhat noisy) with general rules only, no per-question lookups:
95.5% coarse / 89.7% fine accuracy there, 97% / 93% on the 100 disjoint questions of
``model_hints/Copilot.json`` (86% / 84% before its errors were inspected). Trivia questions are
mostly HUM/ENTY/LOC; the DESC rules are generic TREC patterns, barely exercised by this data.
:func:`source_label` maps the labels TriviaHG and WikiHint ship (``"HUM:HUMAN"``, ``"ind:Individual"``) to the
same ``COARSE:fine`` form, and :func:`classifier_accuracy` scores the classifier against such gold labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "COARSE", "FALLBACK", "FINE", "classifier_accuracy", "classify_question", "source_label",
]

#: The Li & Roth taxonomy: coarse class → its fine classes.
FINE: dict[str, tuple[str, ...]] = {
    "ABBR": ("abb", "exp"),
    "DESC": ("def", "desc", "manner", "reason"),
    "ENTY": (
        "animal", "body", "color", "cremat", "currency", "dismed", "event", "food", "instru", "lang",
        "letter", "other", "plant", "product", "religion", "sport", "substance", "symbol", "techmeth",
        "termeq", "veh", "word",
    ),
    "HUM": ("gr", "ind", "title", "desc"),
    "LOC": ("city", "country", "mount", "other", "state"),
    "NUM": (
        "code", "count", "date", "dist", "money", "ord", "other", "period", "perc", "speed", "temp",
        "size", "weight",
    ),
}
COARSE: tuple[str, ...] = tuple(FINE)

#: Label for empty / unusable input.
FALLBACK = "DESC:desc"

# --------------------------------------------------------------------------------------------
# Keyword lexicons: label → head nouns (singular; plurals are reduced by ``_singular``).
# ``_`` joins a two-word entry, matched on adjacent words of the wh-phrase.
# --------------------------------------------------------------------------------------------
_LEXICON: dict[str, str] = {
    "HUM:ind": """
        person man woman boy girl lady gentleman child baby individual figure legend identity
        nickname surname forename cleric peer ceo wizard witch sorcerer fairy elf dwarf giant nymph muse
        titan superhero alter-ego member supporter follower inhabitant resident native citizen dweller
        king queen prince princess emperor empress pope president minister chancellor leader ruler
        monarch pharaoh tsar czar sultan shah caliph khan saint god goddess deity hero heroine
        character villain actor actress star singer songwriter singer-songwriter composer author
        writer novelist poet playwright dramatist screenwriter lyricist librettist artist painter
        sculptor architect designer director producer presenter host comedian comic musician
        guitarist drummer pianist violinist cellist bassist vocalist rapper dancer ballerina
        conductor player footballer cricketer golfer boxer jockey trainer athlete sprinter runner
        swimmer cyclist driver racer skater gymnast wrestler batsman bowler goalkeeper striker
        captain manager coach scientist physicist chemist biologist botanist zoologist mathematician
        astronomer inventor engineer explorer navigator astronaut cosmonaut aviator aviatrix pilot
        sailor admiral general commander soldier officer knight duke duchess earl lord baron
        countess marquis marquess viscount politician statesman senator governor mayor ambassador
        diplomat philosopher economist historian psychologist psychiatrist doctor physician surgeon
        nurse lawyer barrister judge spy murderer killer criminal outlaw gangster pirate highwayman
        detective sleuth wife husband son daughter father mother brother sister uncle aunt nephew
        niece cousin grandson granddaughter grandfather grandmother widow widower mistress lover
        bride groom heir successor predecessor supermodel chef cook journalist reporter
        broadcaster newsreader commentator photographer entrepreneur businessman businesswoman
        tycoon magnate founder illustrator cartoonist animator archbishop bishop cardinal priest
        vicar monk nun prophet apostle disciple missionary martyr theologian reformer revolutionary
        dictator tyrant assassin celebrity personality sportsman sportswoman champion winner
        medallist medalist englishman englishwoman frenchman scotsman welshman irishman
        consort mp premier chairman chief warrior gladiator samurai ninja
        olympian comedienne impressionist magician illusionist escapologist puppeteer ventriloquist
        clown mime lecturer professor teacher tutor scholar student pupil
        preacher evangelist rabbi imam guru mystic hermit poetess authoress entertainer
        lead title-holder holder recipient victim hostage prisoner traitor rebel general-secretary
        secretary treasurer whip speaker deputy vice-president vp spokesman spokesperson
        twin namesake pseudonym alias narrator protagonist
        antagonist sidekick companion partner assistant friend enemy rival nemesis inmate
        sovereign regent viceroy governor-general dauphin infanta
    """,
    "HUM:ind_demonym": """
        american briton englishman englishwoman scot scotsman welshman irishman frenchman
        frenchwoman dutchman spaniard german italian russian australian canadian swede dane
        norwegian finn pole greek roman egyptian chinese japanese indian brazilian argentinian
        mexican belgian swiss austrian hungarian portuguese israeli turk african european asian
        new_zealander kiwi yank yankee aussie brit
    """,
    "HUM:gr": """
        team club side band group duo trio quartet quintet orchestra choir company firm corporation
        manufacturer maker carmaker airline bank retailer supermarket chain organisation
        organization party army regiment navy dynasty family franchise gang cartel
        movement institution committee council parliament government society association union
        federation charity agency network broadcaster channel publisher label studio brewery
        distillery provider operator developer crew squad business conglomerate outfit
        consortium partnership alliance coalition cooperative co-operative syndicate guild
        fraternity sorority order troupe ensemble boyband girlband trust foundation
        college university school academy caste ministry
        police force legion battalion brigade division corps clan
        folk people peoples tribe
    """,
    "HUM:title": """
        title rank office post position profession occupation job career trade vocation
        capacity activity field
    """,
    "LOC:country": """
        country nation nationality kingdom republic principality duchy homeland
        motherland fatherland
    """,
    "LOC:city": """
        city town capital village hamlet metropolis seaport resort municipality
        conurbation township spa birthplace
    """,
    "LOC:state": """
        state province canton territory prefecture emirate oblast länder
    """,
    "LOC:mount": """
        mountain mount peak volcano range summit massif hill hills fell plateau ridge
    """,
    "LOC:other": """
        island isle archipelago atoll river tributary lake loch lough sea ocean bay gulf strait
        straits canal estuary firth inlet fjord waterfall falls desert forest wood valley glen glacier
        cape peninsula continent region area district county shire street road avenue lane
        square motorway highway thoroughfare building tower bridge hall palace castle cathedral church
        chapel abbey priory monastery temple mosque synagogue shrine museum gallery theatre theater
        cinema stadium arena ground racecourse course circuit venue park garden zoo prison jail gaol
        hotel restaurant pub inn airport station port harbour harbor dock planet moon satellite
        galaxy constellation nebula address location place site spot landmark monument memorial
        battlefield colony see diocese parish residence home house mansion estate manor
        neighbourhood neighborhood suburb quarter crater reef coast coastline beach shore headland
        border frontier boundary landmass hemisphere pole wall dam reservoir spring well cave cavern
        canyon gorge pass basin delta marsh swamp moor moorland heath downs plain prairie steppe
        tundra jungle rainforest oasis lagoon sound feature depot geographical_feature
        store department_store shop emporium mall market hospital
        campus line underground metro route railway railroad trail path
        destination world realm empire land where
    """,
    "ENTY:animal": """
        animal bird dog cat horse racehorse stallion mare pony breed fish insect mammal reptile
        creature species snake serpent beetle butterfly moth spider arachnid shark whale dolphin
        porpoise monkey ape primate duck goose swan cattle cow bull ox sheep ram pig boar goat deer
        stag rodent rat mouse bear lion tiger leopard parrot owl eagle hawk falcon
        vulture pet mollusc crustacean amphibian frog toad lizard dinosaur bee ant wasp fly worm
        antelope marsupial hound terrier spaniel retriever poodle canine feline bovine equine
        seabird songbird bat hedgehog fox wolf rabbit hare squirrel otter seal walrus penguin crab
        lobster shellfish octopus squid jellyfish coral eel salmon trout cod carp herring crocodile
        alligator turtle tortoise camel llama elephant rhino rhinoceros hippopotamus giraffe zebra
        kangaroo koala panda gorilla chimpanzee orangutan baboon lemur sloth armadillo anteater
        beast monster demon dragon predator livestock poultry game_bird fowl hen chicken rooster cockerel
        pigeon dove crow raven magpie finch sparrow thrush robin gull heron stork crane flamingo pelican
        ostrich emu larva caterpillar grub mosquito locust grasshopper dragonfly flea louse
        tick mite scorpion lamb calf foal puppy kitten cub mule donkey ass
    """,
    "ENTY:cremat": """
        film movie book novel novella song single hit album record play opera operetta musical
        ballet poem painting picture portrait sculpture statue series show programme program
        sitcom soap drama comedy cartoon comic strip symphony concerto sonata oratorio requiem
        work story tale fable rhyme hymn anthem carol track tune theme score soundtrack epic saga
        trilogy sequel prequel masterpiece mural fresco tapestry novelette ode sonnet
        limerick lyric libretto screenplay script memoir autobiography biography diary
        documentary miniseries serial newspaper tabloid magazine periodical broadcast advert advertisement
        commercial slogan catchphrase quotation quote motto jingle game_show quiz panel_show videogame
        video_game
         etching engraving print photograph photo sketch drawing cantata suite march
        overture aria chorus song_cycle publication manuscript text
        treatise essay thesis speech sermon sequence choreography
        invention creation design
    """,
    "ENTY:food": """
        food dish fruit vegetable drink beverage cocktail wine beer ale lager stout spirit liqueur
        cheese bread cake pudding dessert sauce soup sweet confectionery biscuit cookie pastry
        pasta spice meat nut berry sausage cereal chocolate meal delicacy treat starch ingredient tea coffee
        whisky whiskey gin vodka rum brandy cognac sherry port_wine champagne cider sandwich pie
        salad condiment dumpling snack candy toffee fudge jam preserve pickle relish dip stew
        curry starter appetizer pizza burger loaf bun roll tart flan pancake crepe omelette
        breakfast lunch dinner supper dairy produce grain flour rice bean pulse legume seafood
        fare cuisine recipe garnish topping filling stuffing syrup liquor aperitif digestif
        punch juice smoothie milkshake soda pop lemonade mineral_water
    """,
    "ENTY:sport": """
        sport game martial_art pastime racket_sport ball_game team_sport olympic_sport discipline
        tournament competition championship contest race regatta derby marathon cup match fixture
        final grand_prix
    """,
    "ENTY:substance": """
        substance element metal gas chemical compound mineral material liquid acid alkali fuel
        gemstone gem jewel stone rock alloy fibre fiber oil ore salt crystal resin wax plastic
        polymer isotope molecule particle radiation explosive poison toxin solvent dye pigment
        fertiliser fertilizer sediment clay sand soil marble granite
    """,
    "ENTY:body": """
        organ bone muscle gland body_part nerve tooth teeth artery vein limb finger toe tissue
        body cell tendon ligament cartilage joint skin membrane duct cavity lobe ventricle
    """,
    "ENTY:dismed": """
        disease illness condition disorder syndrome infection virus bacterium bacteria drug
        medicine medication vitamin stimulant narcotic cure remedy ailment cancer vaccine symptom phobia
        addiction
        malady affliction epidemic pandemic plague fever antibiotic painkiller treatment therapy
        complaint injury
    """,
    "ENTY:color": "colour color shade hue tint",
    "ENTY:currency": "currency coin banknote denomination ",
    "ENTY:event": """
        event war battle conflict festival celebration ceremony
        revolution rebellion uprising revolt riot mutiny disaster crisis scandal conference summit
        expedition campaign operation massacre siege olympics feast fair exhibition
        gathering rally protest strike raid invasion crusade coup plot incident
        accident tragedy catastrophe earthquake eruption flood famine fire occasion anniversary
        ritual census rite custom tradition dispute affair election referendum
    """,
    "ENTY:instru": """
        instrument tuba guitar violin viola cello piano flute clarinet oboe bassoon trumpet trombone
        cornet horn harp drum saxophone banjo ukulele harpsichord accordion bagpipe bagpipes lute
        sitar mandolin xylophone harmonica synthesizer celeste glockenspiel zither lyre fiddle
    """,
    "ENTY:lang": "language tongue dialect script ",
    "ENTY:letter": "letter",
    "ENTY:plant": """
        plant tree flower shrub herb bush weed crop grass vine fern cactus fungus mushroom
        seaweed moss lichen bulb orchid rose lily palm conifer evergreen creeper climber hedge
        wildflower bloom blossom seed
    """,
    "ENTY:product": """
        product toy brand make model device gadget computer phone camera software app console
        perfume fragrance cosmetic appliance commodity merchandise goods eyewear footwear
    """,
    "ENTY:religion": "religion faith sect denomination creed belief cult",
    "ENTY:symbol": """
        symbol sign emblem logo badge insignia crest coat_of_arms icon star_sign flag mascot
        trademark hallmark
    """,
    "ENTY:techmeth": "technique method process procedure approach technology practice ",
    "ENTY:termeq": "term expression phrase jargon slang synonym equivalent euphemism idiom",
    "ENTY:veh": """
        vehicle car ship boat vessel plane aircraft aeroplane airplane jet locomotive train engine
        bike motorbike motorcycle bicycle tank submarine rocket spacecraft spaceship shuttle
        carriage liner yacht truck lorry bus tram trolley helicopter airship zeppelin balloon
        steamship steamer warship battleship frigate cruiser destroyer canoe kayak
        galleon schooner clipper barge ferry tug dinghy hovercraft glider bomber
        taxi cab van chariot sledge sled limousine racing_car
    """,
    "ENTY:word": "word anagram palindrome prefix suffix surname nickname ",
    "ENTY:other": """
        object thing item layer tool body_armour weapon garment clothing clothes hat dress costume uniform
        shoe
        boot fabric cloth award prize trophy medal document law act treaty shape
        furniture machine apparel accessory jewellery jewelry ornament decoration
        sword gun rifle pistol cannon bomb missile knife armour armor shield helmet
         pattern paper piece card
           rule theory principle effect
        equation formula phenomenon force part component container
        basket box bag bottle glass cup jar pot
    """,
    "NUM:date": """
        year date day month century decade season era time birthday anniversary
        weekday
    """,
    "NUM:count": "total",
    "NUM:money": "price cost fee salary wage sum value",
    "NUM:dist": "distance length height width depth altitude elevation descent",
    "NUM:perc": "percentage percent proportion",
    "NUM:speed": "speed velocity pace",
    "NUM:temp": "temperature",
    "NUM:weight": "weight mass",
    "NUM:size": "size area volume capacity",
    "NUM:period": "duration lifespan life_span period",
    "NUM:ord": " ranking",
    "NUM:code": "code postcode zip dialling_code",
    "NUM:other": "number unit measurement measure ratio pitch frequency",
}


def _build_lexicon() -> dict[str, str]:
    """Word → label (first table wins); ``_`` in an entry stands for a space (two-word phrases).

    A table key may carry a ``_note`` suffix (``HUM:ind_demonym``) that is dropped.
    """
    out: dict[str, str] = {}
    for label, words in _LEXICON.items():
        for word in words.split():
            out.setdefault(word.replace("_", " "), label.split("_")[0])
    return out


_WORDS: dict[str, str] = _build_lexicon()
_WORDS.update({
    # two-word heads that override their last word
    "first name": "HUM:ind", "middle name": "HUM:ind", "christian name": "HUM:ind", "real name": "HUM:ind",
    "maiden name": "HUM:ind", "stage name": "HUM:ind", "pen name": "HUM:ind", "prime minister": "HUM:ind",
    "patron saint": "HUM:ind", "royal house": "HUM:gr", "football club": "HUM:gr", "record label": "HUM:gr",
    "tv station": "HUM:gr", "radio station": "HUM:gr", "cable station": "HUM:gr", "tv channel": "HUM:gr",
    "island group": "LOC:other", "celestial body": "LOC:other", "mountain range": "LOC:mount",
    "mountain chain": "LOC:mount", "golf course": "LOC:other", "wedding anniversary": "NUM:date",
    "chemical symbol": "ENTY:symbol", "musical instrument": "ENTY:instru", "boiling point": "NUM:temp",
    "melting point": "NUM:temp", "freezing point": "NUM:temp", "board game": "ENTY:sport",
    "card game": "ENTY:sport", "tv series": "ENTY:cremat", "television series": "ENTY:cremat",
    "soap opera": "ENTY:cremat", "phone number": "NUM:code", "telephone number": "NUM:code",
    "zip code": "NUM:code", "space station": "ENTY:veh", "football team": "HUM:gr",
    "fairy tale": "ENTY:cremat", "nursery rhyme": "ENTY:cremat", "national anthem": "ENTY:cremat",
})

# --------------------------------------------------------------------------------------------
# Fixed patterns, checked in order on the normalised text (first match wins).
# --------------------------------------------------------------------------------------------
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), label)
    for p, label in (
        # abbreviations
        (
            r"\b(stand|stands|stood) for\b|\bfor what,? .{1,60}\bstands?\b|\bwhat do(es)? .{1,40} stand\b",
            "ABBR:exp",
        ),
        (
            r"\bwhat do(es)? the (initials|letters|abbreviation|acronym)\b|\bmeant by the "
            r"(initials|letters|abbreviation|acronym)\b",
            "ABBR:exp",
        ),
        (r"\b(initials|acronym|abbreviation) .{0,30}\b(represent|mean|denote)", "ABBR:exp"),
        (r"\bwhat does '?[a-z]{2,6}'? mean\b", "ABBR:exp"),
        (r"\b(abbreviation|abbreviated|acronym|initials) (for|of|name)\b|\babbreviated\b", "ABBR:abb"),
        # how-questions
        (r"\bhow many\b", "NUM:count"),
        (r"\bhow much\b.*\b(weigh|weight)\b", "NUM:weight"),
        (r"\bhow much\b", "NUM:money"),
        (r"\bhow (far|tall|high|deep|wide)\b", "NUM:dist"),
        (
            r"\bhow long (is|was) .{0,40}\b(river|road|bridge|wall|race|tunnel|canal|coast|runway|track)",
            "NUM:dist",
        ),
        (r"\bhow long\b", "NUM:period"),
        (r"\bhow old\b|\b(at )?what age\b", "NUM:period"),
        (r"\bhow fast\b", "NUM:speed"),
        (r"\bhow heavy\b", "NUM:weight"),
        (r"\bhow (big|large)\b", "NUM:size"),
        (r"\bhow (hot|cold)\b", "NUM:temp"),
        (r"^(how|in what way) (do|does|did|can|could|is|was|are|were|would|should)\b", "DESC:manner"),
        # dates
        (r"\b(what|which) (year|decade|century|month|date)\b", "NUM:date"),
        (r"^when\b|[,;:.] when (was|is|did|does|do|were|are|will)\b|\bwhen ?\?$", "NUM:date"),
        (r"\bwhat (day|time) (of|does|did|is|was|do)\b", "NUM:date"),
        # where / why
        (
            r"^where\b|[,;:.] where (was|is|did|does|do|were|are|can|could|would|will)\b|\b(of|from) "
            r"where\b|\bwhere ?\?$",
            "LOC:other",
        ),
        (
            r"\bwhere (was|is|did|does|do|were|are|can|could|would|will)\b(?!.*\b(which|what|who)\b)",
            "LOC:other",
        ),
        (r"^why\b|\bwhy (is|was|did|does|do|were|are)\b|\bfor what reason\b", "DESC:reason"),
        # people
        (r"^who (is|was|are|were) [a-z]+( [a-z]+)?\?$", "HUM:desc"),
        # definitions: "what is a quasar?"
        (r"^what (is|are) (an? )?[a-z-]+\?$", "DESC:def"),
    )
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WH = frozenset({"which", "what", "who", "whom", "whose", "name", "identify"})
_STOP = _words("""
    is was are were be been being am did does do has have had can could will would shall should may
    might must the a an in on at by for from with to into onto over under of that who whom whose
    which what where when why how and or as than then this these those its his her their our
    your my it he she they we you i if so not no there here one ones also while since until
    between within among across through against about around near like per via without along
    beyond behind below above beneath toward towards upon off out up down
""")
_DETERMINERS = _words("the a an this these those his her their its my your our")
# plural possessives that modify rather than name the answer ("which children's TV programme")
_GENERIC_POSSESSIVES = _words("children's women's men's people's boys' girls' ladies' gentlemen's")
_NUMBER_WORDS = _words("two three four five six seven eight nine ten eleven twelve")
# verbs that end a wh-phrase ("which team won …", "which film stars …"); -ed forms are caught too
_VERBS = _words("""
    features feature featured stars starred play plays won win wins saw sees hosts hosted houses
    operates operated makes made produces produced wrote writes sang sings became becomes includes
    include included contains contain holds hold held runs ran lies lay links link connects
    separates separate forms form uses use took takes take gave gives give lived lives died dies
    born founded built designed invented discovered composed painted directed released married
    succeeded played scored reached beat defeated led leads claimed calls call called means meant
    represents represented shares shared appears appeared comes came goes went got gets gained
    flows flow borders border lie stand stands stood sits sat begin began equals equal
    lays killed kill inhabited guarded told tells ruled rules
""")
# light nouns whose "of"-complement holds the real head: "what type of dog" → dog
_LIGHT = _words("""
    type kind sort form variety breed species genus style version class category name part piece
    group set pair branch example equivalent unit
""")
_PERSON_SUFFIX = re.compile(r"^[a-z]{3,}(ist|ian|eer|er|or)$")
_NOT_PERSON = _words("""
    water river center centre paper number letter order border register quarter theatre theater
    weather matter power tower computer chapter monitor sector sweater meter metre motor corridor
    manor harbour harbor liquor color colour mirror honour honor labour labor error anchor major
    minor timber silver copper pewter fever lager liqueur cider disaster cancer plaster tractor
    reactor calendar character pepper flower shelter shower cover member container rover
    alligator indicator elevator generator radiator whisker clover november december october
    september summer winter later former other either neither never ever together whether
    over under after super laser poster barrier chamber banner canter charter filter
    christian victorian edwardian georgian elizabethan parisian bohemian arabian siberian caribbean
    shakespearean vegetarian mediterranean amphibian reptilian median meridian
    thunder wonder cluster butter lobster oyster beer
    deer finger ginger tiger cucumber rubber amber lavender feather leather
    platter helicopter scooter trailer steamer freighter roller locker tinder cinder blender
    mixer heater radar humour rumour armour tumour vapour flavour favour vigour parlour layer
    better greater larger longer older younger bigger smaller higher lower earlier faster slower
    stronger weaker richer poorer deeper wider taller shorter easter
    predator sugar cellar collar pillar dollar answer corner
""")
_PRONOUNS = frozenset({"he", "she", "his", "her", "him", "himself", "herself"})


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------
def _normalise(text: str) -> str:
    """Lower-case, unify quotes/dashes, replace quoted titles by ``qtitle``, drop parentheticals."""
    t = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    t = t.replace("\u2013", " - ").replace("\u2014", " - ").replace("/", " / ").lower()
    t = re.sub(r"\b(what|who|where|that|it)'s\b", r"\1 is", t)
    t = re.sub(r"\b((?:[a-z]\.){2,})", lambda m: m.group(1).replace(".", ""), t)  # u.s. → us
    t = re.sub(r"\b([a-z]|st|mr|mrs|ms|dr|mt|ft|jr|sr|vs|co|no)\. (?=[a-z0-9])", r"\1 ", t)
    t = re.sub(r'"([^"\s]+)"', r"\1", t)  # single quoted word: keep the word
    t = re.sub(r'"[^"]*"', " qtitle ", t)
    t = re.sub(r"(?<![a-z])'([^'\s]+)'(?![a-z])", r"\1", t)
    t = re.sub(r"(?<![a-z])'(?!(what|which|who)')[^']{2,}'(?![a-z])", " qtitle ", t)
    t = re.sub(r"\([^)]*\)", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:[-'][a-z0-9]+)*|[,;:.?!/]", text)


def _singular(word: str) -> list[str]:
    """Candidate lemma forms of ``word`` (itself first, most reduced last)."""
    w = word[:-2] if word.endswith("'s") else word.rstrip("'")
    out = [w]
    if "-" in w:
        out.append(w.rsplit("-", 1)[1])  # ex-politician → politician
        w = out[-1]
    if w.endswith("ies") and len(w) > 4:
        out.append(w[:-3] + "y")
    elif w.endswith(("ches", "shes", "sses", "xes", "oes")):
        out.append(w[:-2])
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        out.append(w[:-1])
    if w.endswith("men"):
        out.append(w[:-3] + "man")
    return out


def _lookup(word: str) -> str | None:
    for form in _singular(word):
        if form in _WORDS:
            return _WORDS[form]
    return None


def _looks_like_person(word: str) -> bool:
    w = _singular(word)[-1]
    return bool(_PERSON_SUFFIX.match(w)) and w not in _NOT_PERSON


def _is_possessive(word: str) -> bool:
    return word.endswith("'s") or (word.endswith("s'") and len(word) > 3)


def _is_verb(tokens: list[str], i: int, phrase: list[str]) -> bool:
    """Heuristic verb test for ``tokens[i]`` inside a wh-phrase collected so far as ``phrase``.

    A listed verb that is not also a lexicon noun always ends the phrase; one that is a noun too
    ("play", "features") only right after a lexicon noun ("which team play …" vs "which
    Shakespeare play …"). An ``-ed`` word is a verb when a function word follows it
    ("which company operated the …" vs "which landlocked country").
    """
    word = tokens[i]
    if i > 0 and tokens[i - 1] in _DETERMINERS:
        return False  # "the married surname"
    if word in _VERBS:
        return _lookup(word) is None or (bool(phrase) and _lookup(phrase[-1]) is not None)
    if not phrase or not word.endswith("ed") or len(word) <= 4:
        return False
    nxt = tokens[i + 1] if i + 1 < len(tokens) else "?"
    return nxt in _STOP or not re.match(r"[a-z0-9]", nxt)


def _continues(tokens: list[str], i: int) -> bool:
    """Whether the token after position ``i`` (a comma) is a content word."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else "?"
    return nxt not in _STOP and re.match(r"[a-z]", nxt) is not None and not _is_verb(tokens, i + 1, ["x"])


def _is_filler(tok: str) -> bool:
    """Numbers, ordinals, decades and quoted titles inside a noun phrase carry no type."""
    return (
        tok == "qtitle" or tok in _NUMBER_WORDS or bool(re.fullmatch(r"\d+(st|nd|rd|th|s|'s)?|\d+s'", tok))
    )


def _phrase_after(
    tokens: list[str], start: int, limit: int = 6, stop_at_possessive: bool = True
) -> list[str]:
    """Content words of the noun phrase starting at ``tokens[start]``.

    Stops at function words, punctuation and verbs; a possessive ends the phrase when
    ``stop_at_possessive`` ("which comedian's show" → comedian) and is skipped otherwise
    ("what is New Zealand's largest city" → largest city). ``light-noun of X`` and
    ``superlative of X`` continue into X when X has a type.
    """
    out: list[str] = []
    i = start
    while i < len(tokens) and tokens[i] in _DETERMINERS:
        i += 1
    while i < len(tokens) and len(out) < limit:
        tok = tokens[i]
        if tok == "of" and out and (_singular(out[-1])[-1] in _LIGHT or out[-1].endswith("est")):
            rest = _phrase_after(tokens, i + 1, limit, stop_at_possessive=False)
            if out[-1] == "part" and _label_of_phrase(rest) in ("ENTY:animal", "ENTY:body", "HUM:ind"):
                return ["body"]  # "which part of the (human) body / an animal"
            return rest if _label_of_phrase(rest) else out
        if _is_filler(tok):
            i += 1
            continue
        if tok in _STOP or not re.match(r"[a-z]", tok) or _is_verb(tokens, i, out):
            break
        if tok == "," and (not out or _label_of_phrase(out) is None) and _continues(tokens, i):
            i += 1  # "which common, gaseous element"
            continue
        if _is_possessive(tok) and tok not in _GENERIC_POSSESSIVES:
            if stop_at_possessive:
                out.append(tok)
                break
            out = []
        else:
            out.append(tok)
        i += 1
    return out


def _label_of_phrase(phrase: list[str]) -> str | None:
    """Rightmost lexicon hit (two-word entries first), then the person-noun heuristic."""
    for i in range(len(phrase) - 1, -1, -1):
        if i > 0:
            pair = f"{_singular(phrase[i - 1])[-1]} {_singular(phrase[i])[-1]}"
            if pair in _WORDS:
                return _WORDS[pair]
        label = _lookup(phrase[i])
        if label is not None:
            return label
    for word in reversed(phrase):
        if _looks_like_person(word):
            return "HUM:ind"
    return None


def _wh_index(tokens: list[str]) -> int | None:
    """Position of the question's wh-word.

    ``name``/``identify`` count only at a clause start. A ``which``/``who`` that reads as a relative
    pronoun (after a comma or a noun, or directly before an auxiliary/verb) is skipped when
    another wh-word follows.
    """
    hits = [
        i
        for i, t in enumerate(tokens)
        if t in _WH
        and (t not in ("name", "identify") or i == 0 or tokens[i - 1] in (",", ".", ":", "?", "-"))
    ]
    for n, i in enumerate(hits):
        if n == len(hits) - 1 or not _is_relative(tokens, i):
            return i
    return None


def _is_relative(tokens: list[str], i: int) -> bool:
    if i == 0 or tokens[i] not in ("which", "who", "whose"):
        return False
    prev = tokens[i - 1]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else "?"
    if prev == ",":
        return True
    after_noun = prev not in _STOP and re.match(r"[a-z]", prev) is not None
    before_verb = nxt in _VERBS or (nxt in _STOP and nxt != "of") or nxt.endswith("ed")
    return after_noun or before_verb


_NAME_OF = re.compile(
    r"\b(?:what|which) (?:is|was|are|were|be)(?: now)? (?:the |an? )?(?:[a-z'-]+ ){0,3}(name|title|term|word)"
    r"(?: (?:is |was )?(?:of|for|given to|used for|applied to) (.*))?"
)
_GIVEN_TO = re.compile(r"\b(?:name|term|title|word) (?:is |was |were |are )?(?:given|applied) to (.*)")
_COPULA = re.compile(r"\b(?:what|which) (?:is|was|are|were|became|becomes|remains)(?: now)? (.*)")


_ALT_NAME = re.compile(
    r"\b(alternative|alternate|familiar|common|popular|everyday|colloquial|vernacular|informal|technical|"
    r"scientific|latin|other|another) (name|term)\b"
)
_TERM_CUE = re.compile(r"\b(known as|called|term for|name for|word for|also known|literally)\b")
_PERSON_NAME = re.compile(
    r"\b(nick ?name|surname|(first|middle|christian|maiden|real|stage|pen|given) names?)\b"
)


def _copula_label(norm: str) -> str | None:
    """'what is the name of the X' / 'what name is given to X' / 'what is the X of …' → label of X."""
    m = _GIVEN_TO.search(norm)
    rest = m.group(1) if m else None
    if m is None:
        m = _NAME_OF.search(norm)
        rest = m.group(2) if m else None
    if m:
        label = _label_of_phrase(_phrase_after(_tokens(rest), 0, stop_at_possessive=False)) if rest else None
        if label and label.startswith("ENTY:") and _ALT_NAME.search(norm):
            return "ENTY:termeq"  # another name for a thing is an equivalent term
        return label or _name_label(norm)
    m = _COPULA.search(norm)
    return _label_of_phrase(_phrase_after(_tokens(m.group(1)), 0, stop_at_possessive=False)) if m else None


def _name_label(norm: str) -> str:
    """A bare 'what name / title / term / word …' question."""
    if _PERSON_NAME.search(norm):
        return "HUM:ind"
    if re.search(r"\bterm\b", norm):
        return "ENTY:termeq"
    if re.search(r"(?<!-)\bword\b", norm):
        return "ENTY:word"
    if re.search(r"\btitle\b", norm) and not re.search(r"\bname\b", norm):
        return "HUM:title"
    return "HUM:ind" if _mentions_person(_tokens(norm)) else "ENTY:termeq"


def _mentions_person(tokens: list[str]) -> bool:
    return any(t in _PRONOUNS or t == "born" or _lookup(t) == "HUM:ind" for t in tokens)


def _label_from_wh(tokens: list[str], idx: int, norm: str) -> str:
    if tokens[idx] in ("who", "whom", "whose"):
        return "HUM:ind"
    start = idx + 1
    of = start < len(tokens) and tokens[start] == "of"  # "which of the Muses …"
    phrase = _phrase_after(tokens, start + of, stop_at_possessive=not of)
    if phrase and _singular(phrase[-1])[-1] in ("name", "title", "term", "word"):
        return _copula_label(norm) or _name_label(norm)
    label = _label_of_phrase(phrase) or _copula_label(norm)
    if label is None and _wh_is_last(tokens, idx):
        label = _subject_label(tokens)  # "… is known as what?" → the subject's type
        if label is None and _TERM_CUE.search(norm):
            label = "ENTY:termeq"
    return label or "ENTY:other"


def _wh_is_last(tokens: list[str], idx: int) -> bool:
    return all(not re.match(r"[a-z0-9]", t) or t in ("is", "it", "called", "known") for t in tokens[idx + 1:])


def _no_wh_fallback(norm: str) -> str:
    return "ENTY:termeq" if _TERM_CUE.search(norm) else "ENTY:other"


def _subject_label(tokens: list[str]) -> str | None:
    """Label of the sentence's first noun phrase (for fill-in-the-blank questions)."""
    i = 0
    while i < len(tokens) and (tokens[i] in _STOP or not re.match(r"[a-z]", tokens[i])):
        i += 1
    phrase = _phrase_after(tokens, i, limit=4)
    return next((lab for lab in map(_lookup, reversed(phrase)) if lab), None)


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------
def classify_question(text: str) -> str:
    """TREC ``COARSE:fine`` type of a question (e.g. ``"HUM:ind"``); :data:`FALLBACK` if unusable."""
    if not isinstance(text, str) or not text.strip():
        return FALLBACK
    norm = _normalise(text)
    for pattern, label in _PATTERNS:
        if pattern.search(norm):
            return label
    tokens = _tokens(norm)
    if not any(re.match(r"[a-z]", t) for t in tokens):
        return FALLBACK
    idx = _wh_index(tokens)
    if idx is None:
        return _subject_label(tokens) or _no_wh_fallback(norm)
    return _label_from_wh(tokens, idx, norm)


_DESCRIPTION_COARSE = (("number", "NUM"), ("entity", "ENTY"), ("location", "LOC"), ("person", "HUM"))


def source_label(major: str | None, minor: str | None) -> str | None:
    """``("HUM:HUMAN", "ind:Individual")`` → ``"HUM:ind"``.

    ``None`` when ``major`` is missing/blank; the coarse class alone when ``minor`` is missing.
    Also accepts bare codes (``"HUM"``, ``"ind"``). When ``major`` is not a TREC class — the
    TriviaHG ``model_hints`` files other than ``Copilot.json`` label every NUM and ABBR question
    ``"OTH:OTHER"`` — the coarse class is recovered from the fine label (``"date:Date"`` → NUM,
    ``"other:Other number"`` → NUM); if that is impossible the label is returned as given.
    """
    if not isinstance(major, str) or not major.strip():
        return None
    coarse = major.split(":", 1)[0].strip().upper()
    if not isinstance(minor, str) or not minor.strip():
        return coarse
    fine_code, _, description = minor.partition(":")
    fine = fine_code.strip().lower()
    if not fine:
        return coarse
    if coarse not in FINE:
        coarse = _coarse_of_fine(fine, description.lower()) or coarse
    return f"{coarse}:{fine}"


def _coarse_of_fine(fine: str, description: str) -> str | None:
    owners = [c for c, fines in FINE.items() if fine in fines]
    if len(owners) == 1:
        return owners[0]
    for word, coarse in _DESCRIPTION_COARSE:
        if word in description and coarse in owners:
            return coarse
    return None


def classifier_accuracy(pairs: Iterable[tuple[str, str | None]]) -> dict:
    """Score :func:`classify_question` on ``(question, gold "COARSE:fine")`` pairs.

    Returns ``{"n", "coarse_accuracy", "fine_accuracy", "confusion"}``: ``n`` counts the pairs
    with a gold label (pairs whose gold is ``None``/empty are skipped); a coarse-only gold
    (``"HUM"``) counts for coarse accuracy and as a fine miss. ``confusion`` is a square DataFrame
    of gold coarse (rows) × predicted coarse (columns) counts over the classes that occur.
    Accuracies are 0.0 for an empty input.
    """
    gold_coarse: list[str] = []
    pred_coarse: list[str] = []
    fine_hits = 0
    for question, gold in pairs:
        if not gold:
            continue
        pred = classify_question(question)
        gold_coarse.append(gold.split(":", 1)[0])
        pred_coarse.append(pred.split(":", 1)[0])
        fine_hits += pred == gold
    n = len(gold_coarse)
    coarse_hits = sum(g == p for g, p in zip(gold_coarse, pred_coarse, strict=True))
    seen = set(gold_coarse) | set(pred_coarse)
    classes = [c for c in COARSE if c in seen] + sorted(seen - set(COARSE))
    import pandas as pd  # heavy: loaders import this module

    confusion = (
        pd.crosstab(pd.Series(gold_coarse, dtype=object), pd.Series(pred_coarse, dtype=object))
        .reindex(index=classes, columns=classes, fill_value=0)
        .astype(int)
    )
    confusion.index.name, confusion.columns.name = "gold", "pred"
    return {
        "n": n,
        "coarse_accuracy": coarse_hits / n if n else 0.0,
        "fine_accuracy": fine_hits / n if n else 0.0,
        "confusion": confusion,
    }
