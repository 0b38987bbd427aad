"""The engine's refusal of a post, typed (``InvalidPostError(PostRefusal.KIND,
**values)``) and worded by render/ in the chat's language: a refusal that is raised
wrong fails where it is raised; every kind has its sentence in render/, with the
engine's blanks, and says in English exactly what ``str()`` says."""

from __future__ import annotations

import copy
import pickle
import string

import pytest

from bots.render.post_refusals import POST_REFUSED
from bots.render.sentences import error_sentence
from bots.render.words import ENGLISH, words_for
from zofia_engine.audio.probe import AudioRefusedError, too_long
from zofia_engine.audio.transcriber import TranscriptionFailedError
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.bounded_work import WorkBusyError
from zofia_engine.errors import InvalidPostError
from zofia_engine.images.decode import ImageRefusedError, too_large, too_many
from zofia_engine.refusals import POST_REFUSALS, PostRefusal, SizeOver, refusal_blanks

#: a value for every blank a refusal's sentence may have
SAMPLE: dict[str, object] = {
    "url": "https://example.org/story",
    "count": 5,
    "max_images": 4,
    "max_bytes": 5_000_000,
    "status": 404,
    "reason": "Not Found",
    "content_type": "application/pdf",
    "max_redirects": 10,
    "size": 31_000_000,
    "max_size": 10_000_000,
    "n": 2,
    "of": 3,
    "refusal": ImageRefusedError(PostRefusal.IMAGE_DAMAGED),
    "megapixels": 60,
    "max_megapixels": 40,
    "width": 5000,
    "height": 12,
    "duration": 450.2,
    "max_duration": 300.0,
}
TYPED = [kind for kind in PostRefusal if kind is not PostRefusal.SAID]


def _refusal(kind: PostRefusal) -> InvalidPostError:
    return InvalidPostError(kind, **{name: SAMPLE[name] for name in refusal_blanks(kind)})


def _blanks(sentence: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(sentence) if name}


def test_every_kind_has_a_sentence_in_the_engine_and_in_render() -> None:
    assert set(POST_REFUSALS) == set(PostRefusal)
    assert set(POST_REFUSED) == set(TYPED)
    for kind in TYPED:
        assert _blanks(POST_REFUSED[kind]) == refusal_blanks(kind), kind


@pytest.mark.parametrize("kind", TYPED)
def test_english_render_says_what_str_says(kind: PostRefusal) -> None:
    refused = _refusal(kind)
    assert refused.kind is kind
    assert error_sentence(refused, ENGLISH) == error_sentence(refused) == str(refused)


@pytest.mark.parametrize("kind", TYPED)
def test_each_kind_is_said_in_french_with_its_values(kind: PostRefusal) -> None:
    refused = _refusal(kind)
    french = error_sentence(refused, words_for("French"))
    assert french != str(refused)
    if "url" in refused.values:
        assert str(SAMPLE["url"]) in french


def test_a_number_is_written_as_the_chat_s_language_writes_it() -> None:
    refused = _refusal(PostRefusal.PAGE_TOO_LARGE)
    assert "5,000,000 bytes" in str(refused)
    assert "5.000.000 Bytes" in error_sentence(refused, words_for("German"))


def test_the_engine_s_refusals_keep_their_english_sentences() -> None:
    assert str(too_many(5, 4)) == "The post has 5 images; up to 4 are checked."
    assert too_many(5, 4).values == {"count": 5, "max_images": 4}
    url = SAMPLE["url"]
    assert str(_refusal(PostRefusal.UNREACHABLE)) == f"{url} could not be fetched."


def test_a_sentence_said_already_is_said_as_it_is() -> None:
    said = InvalidPostError("Le fichier est trop gros.")
    assert said.kind is PostRefusal.SAID
    assert said.values == {"sentence": "Le fichier est trop gros."}
    assert error_sentence(said, words_for("Russian")) == "Le fichier est trop gros."
    image = ImageRefusedError("The image is damaged or cut short; send it again.")
    assert error_sentence(image, words_for("French")) == str(image)


@pytest.mark.parametrize(
    ("kind", "values"),
    [
        (PostRefusal.TOO_MANY_IMAGES, {"count": 5}),  # a value missing
        (PostRefusal.EMPTY, {"url": "https://example.org"}),  # a value it has no blank for
        (PostRefusal.UNREACHABLE, {"link": "https://example.org"}),  # a misnamed value
        ("The post is empty.", {"count": 1}),  # a sentence said already takes none
    ],
)
def test_a_refusal_raised_with_the_wrong_values_fails_where_it_is_raised(
    kind: PostRefusal | str, values: dict[str, object]
) -> None:
    with pytest.raises(TypeError, match="values"):
        InvalidPostError(kind, **values)


@pytest.mark.parametrize("kind", [None, 404, ["empty"]])
def test_a_refusal_of_a_wrongly_typed_kind_fails_where_it_is_raised(kind: object) -> None:
    with pytest.raises(TypeError, match="PostRefusal or a sentence"):
        InvalidPostError(kind)  # type: ignore[arg-type]


def test_a_copied_or_pickled_refusal_keeps_its_kind_and_values() -> None:
    refused = _refusal(PostRefusal.ERROR_STATUS)
    for again in (copy.copy(refused), pickle.loads(pickle.dumps(refused))):
        assert type(again) is InvalidPostError
        assert (again.kind, again.values, str(again)) == (
            refused.kind,
            refused.values,
            str(refused),
        )
    image = pickle.loads(pickle.dumps(ImageRefusedError("Too big.")))
    assert type(image) is ImageRefusedError and str(image) == "Too big."
    # A subclass's own fields go with it (the transcriber's failure, for the log).
    failed = pickle.loads(pickle.dumps(TranscriptionFailedError("server down")))
    assert type(failed) is TranscriptionFailedError and failed.detail == "server down"
    assert failed.kind is PostRefusal.VOICE_NOT_TRANSCRIBED


def test_sizes_and_durations_are_written_in_the_chat_s_language() -> None:
    image = too_large(31_000_000, 10_000_000)
    assert str(image) == "The image is 31 MB; images up to 10 MB are checked."
    french = error_sentence(image, words_for("French"))
    assert "31 Mo" in french and "10 Mo" in french
    small = too_large(870_000, 500_000, what="file")
    assert str(small) == "The file is 870 kB; images up to 500 kB are checked."
    assert "870 ko" in error_sentence(small, words_for("French"))
    voice = too_long(450.2, AudioSettings(max_duration_s=300))
    assert str(voice) == (
        "The voice note is 7 minutes 31 seconds long; voice notes up to 5 minutes are transcribed."
    )
    assert "7 Minuten 31 Sekunden" in error_sentence(voice, words_for("German"))
    assert "7 минут 31 секунда" in error_sentence(voice, words_for("Russian"))
    assert "5 минут" in error_sentence(voice, words_for("Russian"))


def test_a_size_known_only_as_a_bound_is_said_as_one() -> None:
    over = too_large(SizeOver(20_000_000), 10_000_000, what="file")
    assert str(over) == "The file is over 20 MB; images up to 10 MB are checked."
    assert "plus de 20 Mo" in error_sentence(over, words_for("French"))
    again = pickle.loads(pickle.dumps(over))
    assert type(again.values["size"]) is SizeOver and str(again) == str(over)


def test_one_image_of_several_is_named_and_its_own_refusal_said_in_the_language() -> None:
    inner = ImageRefusedError(PostRefusal.IMAGE_DAMAGED)
    refused = ImageRefusedError(PostRefusal.NTH_IMAGE, n=2, of=3, refusal=inner)
    assert str(refused) == "Image 2 of 3: The image is damaged or cut short; send it again."
    assert error_sentence(refused, words_for("French")) == (
        "Image 2 sur 3 : L'image est endommagée ou tronquée ; envoyez-la de nouveau."
    )
    again = pickle.loads(pickle.dumps(refused))
    kept = again.values["refusal"]
    assert type(again) is ImageRefusedError and isinstance(kept, ImageRefusedError)
    assert kept.kind is inner.kind
    nth = too_large(11_000_000, 10_000_000, n=2, of=2)
    assert str(nth) == "Image 2 of 2: the image is 11 MB; images up to 10 MB are checked."


@pytest.mark.parametrize(
    ("refused", "kind"),
    [
        (TranscriptionFailedError("down"), PostRefusal.VOICE_NOT_TRANSCRIBED),
        (AudioRefusedError(PostRefusal.VOICES_OFF), PostRefusal.VOICES_OFF),
        (WorkBusyError(PostRefusal.IMAGES_BUSY), PostRefusal.IMAGES_BUSY),
    ],
)
def test_the_subclasses_keep_their_type_and_say_their_kind(
    refused: InvalidPostError, kind: PostRefusal
) -> None:
    assert refused.kind is kind and str(refused) == POST_REFUSALS[kind]
    assert error_sentence(refused, words_for("Italian")) != str(refused)
