"""Answering in the asker's language (issue 29 part 3).

- the post's language, detected by py3langid (``zofia_engine.language``), on sentences
  written here in every language it tells apart; unknown ("") for a text no one could
  tell, and then the claims name no language and the web search is given none;
- the card's fixed words from the gettext catalogues (``bots/render/locales``; the
  catalogues themselves are held to the code's messages by
  ``tests/bots/render/test_catalogues.py``):
  the card, its buttons and the renderers' labels in French and German, and a
  moderator's review and its correction in a French chat; which language an asker's
  app language gives;
- end to end on the Telegram bot (the fake Bot API, the fake OpenAI server and the fake
  Brave server, the real Stage-1 models): a German post in a chat set to French is
  searched for as German and answered in French; a user whose Telegram app is German,
  in a chat with no language set, gets German words.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import discord
import pytest
import pytest_asyncio

from tests.factories import full_report, stored_check
from tests.peers.fakes.panel_script import PanelScript, schema_name
from tests.peers.fixtures.service_steps import record_card, review
from tests.peers.fixtures.telegram_setup import bot_running, telegram_settings
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result
from tests.peers.servers.telegram_peer import FakeBotAPI, user

from bots.app.runtime import running_service
from bots.app.settings import Settings
from bots.chat.corrections import Notice, saved_sentence, sender
from bots.discord.buttons import verdict_view
from bots.discord.render import progress_message, verdict_embed
from bots.render.card import report_card, verdict_card
from bots.render.card_notes import checks_left_line
from bots.render.languages import LANGUAGE_TAGS
from bots.render.sentences import (
    cooldown_sentence,
    error_sentence,
    refusal_reason,
    refusals_sentence,
)
from bots.render.words import (
    ENGLISH,
    chat_language,
    locale_language,
    words_for,
)
from bots.service.corrections import correct
from bots.service.naming import ChatNamer
from bots.service.records import Outcome
from bots.service.refusals import Limit, Refusal
from bots.telegram.commands import FROM_APP
from bots.telegram.render import card_html, card_keyboard, progress_html
from bots.telegram.reviews import choice_keyboard
from storage.database import open_database
from storage.store import CheckStore
from zofia_engine.agents.claims import extract_claims
from zofia_engine.agents.context import PanelContext
from zofia_engine.config import AgentSettings, EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.language import (
    DETECTED,
    LANGUAGE_NAMES,
    MIN_CONFIDENCE,
    detect_language,
    language_scores,
)
from zofia_engine.llm.scripted import ScriptedBackend
from zofia_engine.llm.session import CheckSession, Route
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.brave import BraveSearch
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.search_fixtures", "tests.peers.fixtures.model_fixtures"]

# ----------------------------------------------------------------- the post's language

#: ten sentences a post could be made of, in eight of the languages the detector tells apart
#: (written here, not the bench's: bench/data/language_sentences.tsv)
SENTENCES = {
    "en": [
        "The mayor signed a law that bans bicycles from every street in the city.",
        "Scientists say that drinking coffee at night doubles your lifespan.",
        "The government has announced that all schools will close next week.",
        "A video shows the president falling asleep during the summit in Brussels.",
        "There is no evidence that the vaccine changes your DNA, doctors said.",
        "The company was fined after its factory polluted the river for years.",
        "They claim the new bridge was built with money from a foreign bank.",
        "Police arrested two men who were selling fake tickets at the stadium.",
        "This photo of a shark on a flooded highway has been shared thousands of times.",
        "The minister said prices would fall by half before the end of the year.",
    ],
    "de": [
        "Der Bürgermeister hat ein Gesetz unterschrieben, das Fahrräder aus der Stadt verbannt.",
        "Wissenschaftler sagen, dass Kaffee am Abend die Lebenserwartung verdoppelt.",
        "Die Regierung hat angekündigt, dass alle Schulen nächste Woche schließen.",
        "Ein Video zeigt den Präsidenten, wie er auf dem Gipfel in Brüssel einschläft.",
        "Es gibt keine Belege dafür, dass der Impfstoff die DNA verändert, sagen Ärzte.",
        "Die Firma wurde bestraft, weil ihre Fabrik den Fluss jahrelang verschmutzt hat.",
        "Sie behaupten, die neue Brücke sei mit Geld einer ausländischen Bank gebaut worden.",
        "Die Polizei hat zwei Männer festgenommen, die am Stadion falsche Karten verkauften.",
        "Dieses Foto eines Hais auf einer überfluteten Autobahn wurde tausendfach geteilt.",
        "Der Minister sagte, die Preise würden bis zum Ende des Jahres um die Hälfte sinken.",
    ],
    "fr": [
        "Le maire a signé une loi qui interdit les vélos dans toutes les rues de la ville.",
        "Des scientifiques affirment que boire du café le soir double votre espérance de vie.",
        "Le gouvernement a annoncé que toutes les écoles fermeront la semaine prochaine.",
        "Une vidéo montre le président qui s'endort pendant le sommet de Bruxelles.",
        "Il n'y a aucune preuve que le vaccin modifie votre ADN, selon les médecins.",
        "L'entreprise a été condamnée après que son usine a pollué la rivière des années.",
        "Ils prétendent que le nouveau pont a été construit avec l'argent d'une banque.",
        "La police a arrêté deux hommes qui vendaient de faux billets devant le stade.",
        "Cette photo d'un requin sur une autoroute inondée a été partagée des milliers de fois.",
        "Le ministre a dit que les prix baisseraient de moitié avant la fin de l'année.",
    ],
    "es": [
        "El alcalde firmó una ley que prohíbe las bicicletas en todas las calles de la ciudad.",
        "Los científicos dicen que tomar café por la noche duplica la esperanza de vida.",
        "El gobierno ha anunciado que todas las escuelas cerrarán la próxima semana.",
        "Un vídeo muestra al presidente dormido durante la cumbre de Bruselas.",
        "No hay pruebas de que la vacuna cambie el ADN, según los médicos.",
        "La empresa fue multada porque su fábrica contaminó el río durante años.",
        "Dicen que el nuevo puente se construyó con dinero de un banco extranjero.",
        "La policía detuvo a dos hombres que vendían entradas falsas en el estadio.",
        "Esta foto de un tiburón en una autopista inundada se ha compartido miles de veces.",
        "El ministro dijo que los precios bajarán a la mitad antes del final del año.",
    ],
    "it": [
        "Il sindaco ha firmato una legge che vieta le biciclette in tutte le strade della città.",
        "Gli scienziati dicono che bere caffè la sera raddoppia la durata della vita.",
        "Il governo ha annunciato che tutte le scuole chiuderanno la prossima settimana.",
        "Un video mostra il presidente che si addormenta durante il vertice di Bruxelles.",
        "Non ci sono prove che il vaccino modifichi il DNA, secondo i medici.",
        "L'azienda è stata multata perché la sua fabbrica ha inquinato il fiume per anni.",
        "Sostengono che il nuovo ponte sia stato costruito con i soldi di una banca straniera.",
        "La polizia ha arrestato due uomini che vendevano biglietti falsi allo stadio.",
        "Questa foto di uno squalo su un'autostrada allagata è stata condivisa migliaia di volte.",
        "Il ministro ha detto che i prezzi scenderanno della metà entro la fine dell'anno.",
    ],
    "nl": [
        "De burgemeester heeft een wet getekend die fietsen uit alle straten van de stad weert.",
        "Wetenschappers zeggen dat koffie drinken in de avond je levensduur verdubbelt.",
        "De regering heeft aangekondigd dat alle scholen volgende week dichtgaan.",
        "Een video laat zien hoe de president in slaap valt tijdens de top in Brussel.",
        "Er is geen bewijs dat het vaccin je DNA verandert, zeggen artsen.",
        "Het bedrijf kreeg een boete omdat de fabriek jarenlang de rivier heeft vervuild.",
        "Ze beweren dat de nieuwe brug is gebouwd met geld van een buitenlandse bank.",
        "De politie heeft twee mannen opgepakt die bij het stadion valse kaartjes verkochten.",
        "Deze foto van een haai op een overstroomde snelweg is duizenden keren gedeeld.",
        "De minister zei dat de prijzen voor het einde van het jaar met de helft zouden dalen.",
    ],
    "pt": [
        "O prefeito assinou uma lei que proíbe as bicicletas em todas as ruas da cidade.",
        "Os cientistas dizem que beber café à noite dobra a expectativa de vida.",
        "O governo anunciou que todas as escolas vão fechar na próxima semana.",
        "Um vídeo mostra o presidente dormindo durante a cúpula em Bruxelas.",
        "Não há provas de que a vacina altere o seu DNA, segundo os médicos.",
        "A empresa foi multada porque a sua fábrica poluiu o rio durante anos.",
        "Eles afirmam que a nova ponte foi construída com dinheiro de um banco estrangeiro.",
        "A polícia prendeu dois homens que vendiam ingressos falsos no estádio.",
        "Esta foto de um tubarão numa estrada alagada foi compartilhada milhares de vezes.",
        "O ministro disse que os preços vão cair pela metade até o fim do ano.",
    ],
    "pl": [
        "Burmistrz podpisał ustawę, która zakazuje jazdy na rowerze na wszystkich ulicach miasta.",
        "Naukowcy twierdzą, że picie kawy wieczorem podwaja długość życia.",
        "Rząd ogłosił, że wszystkie szkoły zostaną zamknięte w przyszłym tygodniu.",
        "Nagranie pokazuje prezydenta, który zasypia podczas szczytu w Brukseli.",
        "Nie ma dowodów na to, że szczepionka zmienia DNA, mówią lekarze.",
        "Firma dostała karę, bo jej fabryka przez lata zatruwała rzekę.",
        "Twierdzą, że nowy most zbudowano za pieniądze zagranicznego banku.",
        "Policja zatrzymała dwóch mężczyzn, którzy sprzedawali fałszywe bilety pod stadionem.",
        "To zdjęcie rekina na zalanej autostradzie udostępniono tysiące razy.",
        "Minister powiedział, że ceny spadną o połowę do końca roku.",
    ],
}

#: one sentence in each other language the detector tells apart
ONE_SENTENCE = {
    "ar": "قالت الحكومة إن جميع المدارس ستغلق الأسبوع المقبل بسبب الإضراب.",
    "bn": "সরকার জানিয়েছে যে আগামী সপ্তাহে সব স্কুল বন্ধ থাকবে।",
    "cs": "Vláda oznámila, že všechny školy budou příští týden zavřené.",
    "da": "Regeringen har meddelt, at alle skoler lukker i næste uge.",
    "el": "Η κυβέρνηση ανακοίνωσε ότι όλα τα σχολεία θα κλείσουν την επόμενη εβδομάδα.",
    "fa": "دولت اعلام کرد که همه مدارس هفته آینده تعطیل خواهند شد.",
    "fi": "Hallitus ilmoitti, että kaikki koulut suljetaan ensi viikolla.",
    "he": "הממשלה הודיעה שכל בתי הספר ייסגרו בשבוע הבא.",
    "hi": "सरकार ने घोषणा की है कि अगले सप्ताह सभी स्कूल बंद रहेंगे।",
    "hu": "A kormány bejelentette, hogy jövő héten minden iskola bezár.",
    "id": "Pemerintah mengumumkan bahwa semua sekolah akan ditutup minggu depan.",
    "ja": "政府は来週すべての学校を閉鎖すると発表しました。",
    "ko": "정부는 다음 주에 모든 학교가 문을 닫는다고 발표했다.",
    "ms": "Kerajaan mengumumkan bahawa semua sekolah akan ditutup minggu hadapan.",
    "no": "Regjeringen har kunngjort at alle skoler stenger neste uke.",
    "ro": "Guvernul a anunțat că toate școlile se vor închide săptămâna viitoare.",
    "ru": "Правительство объявило, что все школы закроются на следующей неделе.",
    "sv": "Regeringen har meddelat att alla skolor stänger nästa vecka.",
    "sw": "Serikali imetangaza kwamba shule zote zitafungwa wiki ijayo.",
    "th": "รัฐบาลประกาศว่าโรงเรียนทุกแห่งจะปิดในสัปดาห์หน้า",
    "tl": "Inanunsyo ng gobyerno na isasara ang lahat ng paaralan sa susunod na linggo.",
    "tr": "Hükümet, gelecek hafta tüm okulların kapanacağını açıkladı.",
    "uk": "Уряд оголосив, що всі школи закриються наступного тижня.",
    "ur": "حکومت نے اعلان کیا ہے کہ اگلے ہفتے تمام اسکول بند رہیں گے۔",
    "vi": "Chính phủ thông báo rằng tất cả các trường học sẽ đóng cửa vào tuần tới.",
    "zh": "政府宣布下周所有学校都将关闭。",
}
#: too short, too bare or too mixed to tell: unknown
UNCLEAR = [
    "",
    "   ",
    "Hi",
    "lol ok",
    "2024!!!",
    "Paris 2024",
    "Merkel Macron Biden",
    "Olaf Scholz",
    "Le Monde",
    "Die Hard 4",
    "La La Land",
    "https://example.org/a/b?c=d",
    "@bbcnews",
    "🚨🚨🚨",
]


def test_the_detector_tells_the_languages_a_chat_can_pick_and_english() -> None:
    named = {"en": "English"} | {tag: name for name, tag in LANGUAGE_TAGS.items()}
    assert named == LANGUAGE_NAMES
    assert set(DETECTED) == set(LANGUAGE_NAMES)
    assert set(DETECTED) == {*SENTENCES, *ONE_SENTENCE}
    assert all(len(sentences) == 10 for sentences in SENTENCES.values())


@pytest.mark.parametrize("language", sorted(SENTENCES))
def test_the_detector_tells_each_language_from_one_sentence(language: str) -> None:
    found = [detect_language(sentence) for sentence in SENTENCES[language]]
    accuracy = sum(code == language for code in found) / len(found)
    assert accuracy >= 0.9, list(zip(found, SENTENCES[language], strict=True))


def test_the_detector_is_right_on_nineteen_in_twenty_sentences_and_on_whole_posts() -> None:
    pairs = [(code, s) for code, sentences in SENTENCES.items() for s in sentences]
    assert sum(detect_language(s) == code for code, s in pairs) / len(pairs) >= 0.95
    # A post of several sentences leaves no doubt.
    for code, sentences in SENTENCES.items():
        assert detect_language(" ".join(sentences[:3])) == code


def test_the_detector_tells_every_other_language_it_names() -> None:
    found = {code: detect_language(sentence) for code, sentence in ONE_SENTENCE.items()}
    assert found == {code: code for code in ONE_SENTENCE}


def test_a_link_or_a_handle_does_not_hide_the_posts_language() -> None:
    post = "@lokalnews Der Bürgermeister lügt https://example.com/the-mayor-is-lying-about-this"
    assert detect_language(post) == "de"
    scores = language_scores(post)
    assert max(scores, key=lambda code: scores[code]) == "de"
    assert scores["de"] >= MIN_CONFIDENCE > scores["en"]


@pytest.mark.parametrize("text", UNCLEAR)
def test_short_or_ambiguous_text_is_unknown(text: str) -> None:
    assert detect_language(text) == ""
    assert max(language_scores(text).values()) < MIN_CONFIDENCE


def test_importing_the_module_loads_no_model() -> None:
    probe = (
        "import sys\nimport zofia_engine.language as language\n"
        "print('py3langid' in sys.modules)\n"
        "found = language.detect_language('Czy to zdjęcie jest prawdziwe?')\n"
        "print(found, 'py3langid' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "pl", "True"]


def test_threads_asking_at_once_load_the_model_once() -> None:
    """In a fresh interpreter (nothing loaded yet), six threads ask at once; the model
    file is read once."""
    sentences = [SENTENCES[code][0] for code in ("de", "fr", "es", "it", "nl", "pl")]
    probe = f"""
import json, threading
from concurrent.futures import ThreadPoolExecutor
from py3langid.langid import LanguageIdentifier
from zofia_engine.language import detect_language
loads = []
real = LanguageIdentifier.from_model_file
def counted(model_file, **kwargs):
    loads.append(model_file)
    return real(model_file, **kwargs)
LanguageIdentifier.from_model_file = counted
start = threading.Barrier(6)
def detect(sentence):
    start.wait()
    return detect_language(sentence)
with ThreadPoolExecutor(6) as pool:
    found = list(pool.map(detect, {sentences!r}))
print(json.dumps([found, len(loads)]))
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [["de", "fr", "es", "it", "nl", "pl"], 1]


async def _extractor_prompt(post: str) -> str:
    """The extractor's task for ``post``, as the claim step sends it to the model."""
    reply = {"core_claim": {"sentence": 1, "claim": post}, "sub_claims": []}
    backend = ScriptedBackend(lambda request: json.dumps(reply))
    session = CheckSession({"extractor": Route(backend, "scripted")})
    panel = PanelContext(post, post_language=detect_language(post))  # as a check builds it
    await extract_claims(session, panel, AgentSettings())
    (request,) = backend.requests
    return request.messages[-1].content


async def test_the_claims_are_asked_in_the_posts_language_named_only_when_it_is_known() -> None:
    polish = await _extractor_prompt(SENTENCES["pl"][2])
    assert "in the post's own words and in the post's own language (Polish), even" in polish
    unknown = await _extractor_prompt("Olaf Scholz lol")
    assert "in the post's own words and in the post's own language, even" in unknown
    assert not any(f"({name})" in unknown for name in LANGUAGE_NAMES.values())


# --------------------------------------------------------------- the card's fixed words

FRENCH, GERMAN = words_for("French"), words_for("German")


def _labels(rows: Any) -> list[str]:
    return [button.text for row in rows.inline_keyboard for button in row]


def _view_labels(view: discord.ui.View) -> list[str | None]:
    """The labels of ``view``'s buttons (a check's button wraps its own: a DynamicItem)."""
    labels: list[str | None] = []
    for item in view.children:
        button = item.item if isinstance(item, discord.ui.DynamicItem) else item
        assert isinstance(button, discord.ui.Button)
        labels.append(button.label)
    return labels


def test_english_is_the_identity_and_a_language_without_words_gets_english() -> None:
    assert words_for("") is ENGLISH and words_for("Swahili") is ENGLISH
    assert ENGLISH("False") == "False" and ENGLISH.percent(0.873) == "87%"
    card = verdict_card(Outcome("abc", full_report("false")))
    assert card.headline == "False"
    assert _labels(card_keyboard("abc"))[:3] == ["Debate", "Evidence", "Claims"]


def test_the_card_in_french() -> None:
    outcome = Outcome(
        "abc123",
        full_report("false"),
        repeat_kind="exact",
        original_at=dt.datetime(2026, 11, 20, 14, 3, tzinfo=dt.UTC),
    )
    card = verdict_card(outcome, origin="canal Nouvelles", checks_left=2, words=FRENCH)
    assert (card.icon, card.headline, card.confidence) == ("❌", "Faux", "87\xa0%")
    assert card.repeat_note == "Répétition d'une vérification du 2026-11-20 14:03 UTC."
    assert "Il vous reste 2 vérifications aujourd'hui." in card.notes
    assert card.checked == "Vérifié : la légende et le texte (1 image)"
    assert "L'image porte les mots « FALSE: no ban exists »." in card.notes
    assert any(link.title.startswith("Déjà vérifié par PolitiFact") for link in card.checked_by)
    html = card_html(card)
    assert html.startswith("❌ <b>Faux</b> · confiance 87\xa0%")
    assert "<i>De canal Nouvelles</i>" in html
    keyboard = card_keyboard(card.check_id, (2, 0), report_url="https://x.org/r/1", words=FRENCH)
    labels = _labels(keyboard)
    assert labels[:5] == ["Débat", "Preuves", "Affirmations", "👍 2", "👎"]
    assert labels[-1] == "Rapport complet"
    assert progress_html([], FRENCH) == "🔎 <b>Vérification en cours…</b>"
    embed = verdict_embed(card)
    assert embed.title == "❌ Faux"
    names = [field.name for field in embed.fields]
    assert names[:3] == ["Vérifications publiées", "Vérifié", "Confiance"]
    assert "Meilleures preuves" in names and "Remarques" in names
    assert embed.fields[1].value == (
        "la légende et le texte \\(1 image\\)\n"
        "Lu sur l'image : « BIKES BANNED IN SPRINGFIELD — $500 FINE »"
    )
    assert embed.footer.text is not None and embed.footer.text.endswith("Vérification abc123")
    view = verdict_view("abc123", words=FRENCH)
    buttons = _view_labels(view)
    assert buttons[:3] == ["Débat", "Preuves", "Affirmations"]
    assert progress_message([], FRENCH) == "⏳ Vérification en cours…"


def test_the_unproven_card_and_the_sentences_in_german_and_french() -> None:
    card = report_card("x", full_report("unproven"), words=GERMAN)
    assert card.headline == "Unbelegt"
    assert card.lean == "Das Gremium tendiert zu falsch (62\xa0%)."
    assert "Was es klären würde: The council's minutes." in card.notes
    assert checks_left_line(1, FRENCH) == "Il vous reste 1 vérification aujourd'hui."
    assert checks_left_line(1, GERMAN) == "Du hast heute noch 1 Prüfung."
    assert error_sentence(TimeoutError(), FRENCH).startswith("Un problème est survenu")
    assert cooldown_sentence(30, "server", GERMAN).startswith("Prüfungen auf diesem Server")
    reason = refusal_reason(Refusal(Limit.USER_RATE, 60, count=3), FRENCH)
    assert reason == (
        "Vous avez demandé 3 vérifications dans la dernière minute, le maximum pour une personne."
    )
    assert refusals_sentence(3, reason, 60, FRENCH) == (
        f"3 publications n'ont pas été vérifiées. {reason} Renvoyez-les dans 60 s."
    )
    assert refusals_sentence(1, reason, 60, FRENCH).startswith("1 publication n'a pas été")


async def test_a_french_moderator_reviews_in_french_and_the_chat_is_told_in_french(
    tmp_path: Path,
) -> None:
    """A check answered in French: the Review button, the choices and the moderator's
    sentence are French, and the update its chat is sent (with the card as it now
    reads) says the change in French, with the card's own verdict names."""
    assert _labels(card_keyboard("abc", words=FRENCH))[5] == "Réviser"
    view = verdict_view("abc", words=FRENCH)
    assert _view_labels(view)[5] == "Réviser"
    labels = ["Confirmer", "Vrai", "Faux", "Trompeur", "Non prouvé", "Annuler"]
    assert _labels(choice_keyboard("abc", FRENCH)) == labels
    assert saved_sentence("unproven", "false", FRENCH) == (
        "Révision enregistrée : Non prouvé → Faux. "
        "Chaque discussion où ce verdict a été montré en est informée."
    )
    assert saved_sentence("false", "false", FRENCH) == (
        "Révision enregistrée : le verdict Faux est confirmé."
    )
    database = open_database(tmp_path / "zofia.db")
    try:
        store = CheckStore(database, secret=b"k" * 32)
        check = stored_check(store, full_report("unproven"), language="French")
        record_card(
            store,
            check.id,
            platform="telegram",
            chat="42",
            message="7",
            verdict="unproven",
            queued=False,
        )
        note = "Le procès-verbal du conseil ne montre aucun vote."
        review(
            store,
            check.id,
            reviewer="r",
            platform="telegram",
            verdict="false",
            note=note,
            queued=False,
        )
        told: list[Notice] = []

        async def send(notice: Notice) -> None:
            told.append(notice)

        namer = ChatNamer(b"k" * 32)
        assert await correct(store, asyncio.to_thread, namer, check.id, ("telegram", sender(send)))
    finally:
        database.close()
    (notice,) = told
    assert notice.sentence == (
        f"Mise à jour : le verdict de cette publication a été changé de Non prouvé en Faux : {note}"
    )
    ((_, card),) = notice.cards
    assert card.headline == "Faux"
    assert f"Modifié par les vérificateurs du service de Non prouvé en Faux : {note}" in card.notes


def test_the_chats_language_is_its_setting_else_the_askers_when_the_bot_has_its_words() -> None:
    assert chat_language("French", "de") == "French"
    assert chat_language("", "de") == ""  # set to English: English for everyone
    assert chat_language(None, "de") == "German"
    assert chat_language(None, "fr-CA") == "French"
    assert chat_language(None, "sw") == ""  # no words for Swahili: English
    assert chat_language(None, None) == ""
    assert locale_language("en-US") == "" and locale_language("de_AT") == "German"


@pytest.mark.parametrize(
    ("locale", "language"),
    [
        # Telegram's language_code (the app's language, an IETF tag, lower case)
        ("pt-br", "Portuguese"),
        ("es", "Spanish"),
        ("hi", "Hindi"),
        ("ar", "Arabic"),
        # Discord's locales (no Arabic one)
        ("pt-BR", "Portuguese"),
        ("es-419", "Spanish"),
        ("es-ES", "Spanish"),
        ("id", "Indonesian"),
        ("hi", "Hindi"),
        ("ru", "Russian"),
        ("it", "Italian"),
        ("uk", ""),  # Ukrainian: the panel writes it, the card has no words for it
        ("ja", ""),
    ],
)
def test_an_askers_app_language_picks_the_cards_words(locale: str, language: str) -> None:
    assert locale_language(locale) == language
    assert chat_language(None, locale) == language
    assert chat_language("", locale) == ""  # a chat set to English stays English


# ------------------------------------------------------- end to end on the Telegram bot

ENGINE_S = 90.0  # an engine run on two busy cores, with real NER and MiniLM
GERMAN_POST = (
    "Der Bürgermeister von Springfield hat das Radfahren in der ganzen Stadt verboten. "
    "Misty Buscher hat das Gesetz im März unterschrieben, und die Radfahrer müssen jetzt "
    "500 Dollar Strafe zahlen."
)
GERMAN_CLAIMS = {
    "core_claim": {
        "sentence": 1,
        "claim": "Der Bürgermeister von Springfield hat das Radfahren in der Stadt verboten.",
    },
    "sub_claims": [
        {"sentence": 2, "claim": "Misty Buscher hat das Gesetz im März unterschrieben."},
        {"sentence": 2, "claim": "Die Radfahrer müssen 500 Dollar Strafe zahlen."},
    ],
}
GERMAN_PAGE = [
    "Der Stadtrat von Springfield hat im März kein Gesetz über Fahrräder beschlossen.",
    "Misty Buscher hat kein Gesetz zum Radfahren unterschrieben.",
    "Kein Gesetz verlangt von Radfahrern 500 Dollar.",
]
GERMAN_HITS = [
    brave_result(
        "https://springfield.il.us/rat/protokoll",
        "Protokoll des Stadtrats, März",
        " ".join(GERMAN_PAGE),
    ),
]
ANN = user(601, "Ann")
DORA = user(602, "Dora") | {"language_code": "de"}


def _private(sender: dict[str, Any]) -> dict[str, Any]:
    return {"id": sender["id"], "type": "private", "first_name": sender["first_name"]}


def _card(peer: FakeBotAPI, chat_id: int) -> dict[str, Any] | None:
    """The bot's newest verdict card in a chat (a message with a d: button)."""
    message: dict[str, Any]  # mypy types reversed() of a list of dict[str, Any] as Any
    for message in reversed(peer.bot_messages(chat_id)):
        rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
        if any(b.get("callback_data", "").startswith("d:") for row in rows for b in row):
            return message
    return None


def _said(peer: FakeBotAPI, chat_id: int) -> str:
    """The bot's newest message in a chat, as the reader sees it ("" before any)."""
    messages = peer.bot_messages(chat_id)
    return str(messages[-1]["text"]) if messages else ""


def _button_texts(message: dict[str, Any]) -> list[str]:
    rows = message["reply_markup"]["inline_keyboard"]
    return [button["text"] for row in rows for button in row]


class Bot:
    """The fake servers and the engine; :meth:`running` runs the bot on them."""

    def __init__(self, peer: FakeBotAPI, panel: FakeOpenAI, brave: FakeBrave, settings: Settings):
        self.peer, self.panel, self.brave, self.settings = peer, panel, brave, settings
        self.engine: Engine | None = None

    @asynccontextmanager
    async def running(self, stage1: EntityGuidedRetrieval) -> AsyncIterator[None]:
        self.engine = Engine(self.settings.engine, retrieval=stage1)
        async with (
            running_service(self.settings, engine=self.engine) as service,
            bot_running(self.settings, service),
        ):
            yield

    def systems(self) -> set[str]:
        """The panel's system prompts (not the contradiction check's, which writes none)."""
        found = {str(body["messages"][0]["content"]) for body in self.panel.requests}
        return {system for system in found if "fact-checking panel" in system}


@pytest_asyncio.fixture
async def bot(tmp_path: Path, brave_server: FakeBrave) -> AsyncIterator[Bot]:
    script = PanelScript(extractorreply=GERMAN_CLAIMS)
    brave_server.respond(brave_body(GERMAN_HITS))
    async with FakeBotAPI() as peer, FakeOpenAI(script, api_key="sk-lang") as panel:
        settings = telegram_settings(
            peer,
            tmp_path,
            llm={"backend": "openai", "openai": {"base_url": panel.base_url, "api_key": "sk-lang"}},
        )
        made = Bot(peer, panel, brave_server, settings)
        try:
            yield made
        finally:
            if made.engine is not None:
                await made.engine.aclose()


def _stage1(
    bot: Bot, ner: NERBackend, encoder: SentenceTransformerEncoder, wiki: OfflineWikipedia
) -> EntityGuidedRetrieval:
    brave = BraveSearch(BRAVE_TOKEN, base_url=bot.brave.base_url, requests_per_second=1000.0)
    return EntityGuidedRetrieval(
        bot.settings.engine, ner=ner, encoder=encoder, search_backends=[brave], wikipedia=wiki
    )


@pytest.mark.slow
async def test_stage1_gives_the_web_search_no_language_for_a_post_it_cannot_tell(
    brave_server: FakeBrave, ner: NERBackend, encoder: SentenceTransformerEncoder
) -> None:
    brave = BraveSearch(BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=1000.0)
    async with EntityGuidedRetrieval(
        EngineSettings(), ner=ner, encoder=encoder, search_backends=[brave], wikipedia=False
    ) as stage1:
        unknown = await stage1.run("Olaf Scholz lol")
        asked = len(brave_server.requests)
        german = await stage1.run(GERMAN_POST)
    assert (unknown.language, german.language) == ("", "de")
    first, then = brave_server.requests[:asked], brave_server.requests[asked:]
    assert first and all("search_lang" not in request.params for request in first)
    assert then and {request.params.get("search_lang") for request in then} == {"de"}


@pytest.mark.slow
async def test_a_german_post_in_a_french_chat_is_searched_in_german_and_answered_in_french(
    bot: Bot,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
) -> None:
    peer = bot.peer
    async with bot.running(_stage1(bot, ner, encoder, offline_wiki)):
        peer.send(_private(ANN), ANN, "/settings language French")
        # the readout follows the language just set: French, naming it in French
        await peer.wait_for(lambda: "en français ici" in _said(peer, ANN["id"]))
        peer.send(_private(ANN), ANN, GERMAN_POST)
        card = await peer.wait_for(lambda: _card(peer, ANN["id"]), ENGINE_S)
    # The panel was asked to write in French, every call of the check.
    systems = bot.systems()
    assert systems and all("summary) in French." in system for system in systems)
    # The claims were extracted in the post's own language, named.
    extractor = [b for b in bot.panel.requests if schema_name(b) == "extractorreply"]
    assert extractor
    assert "in the post's own language (German)" in extractor[0]["messages"][-1]["content"]
    # The web search was told the post is German.
    assert bot.brave.requests
    assert {request.params.get("search_lang") for request in bot.brave.requests} == {"de"}
    # The card's own words are French: the verdict's name, the sentence that quotes the
    # German page (the page's words as they are), the buttons.
    assert card["text"].startswith("❌ Faux\n")
    # one of the page's sentences, whichever the reading cited, as the page wrote it
    assert any(f"Ce que disent les sources : « {line}" in card["text"] for line in GERMAN_PAGE)
    assert _button_texts(card)[:3] == ["Débat", "Preuves", "Affirmations"]


@pytest.mark.slow
async def test_a_german_telegram_user_in_a_chat_with_no_language_gets_german_words(
    bot: Bot,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
) -> None:
    peer = bot.peer
    async with bot.running(_stage1(bot, ner, encoder, offline_wiki)):
        peer.send(_private(DORA), DORA, "/settings")
        said = await peer.wait_for(lambda: _said(peer, DORA["id"]))
        assert "auf Deutsch" in said and words_for("German")(FROM_APP).strip() in said
        peer.send(_private(DORA), DORA, GERMAN_POST)
        card = await peer.wait_for(lambda: _card(peer, DORA["id"]), ENGINE_S)
        # Another asker in another chat, with no language anywhere: English.
        peer.send(_private(ANN), ANN, "/settings")
        english = await peer.wait_for(lambda: _said(peer, ANN["id"]))
    assert "in English here" in english
    assert _button_texts(card)[:3] == ["Debatte", "Belege", "Behauptungen"]
    # The judge's scripted "false", which the German web page refutes: "Falsch", and the
    # page's own words under the card's German sentence.
    assert card["text"].startswith("❌ Falsch\n")
    assert any(f"Was die Quellen sagen: „{line}" in card["text"] for line in GERMAN_PAGE)
    # The panel too was asked to write in German.
    assert bot.systems() and all("summary) in German." in s for s in bot.systems())
