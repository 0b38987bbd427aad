"""Voice notes and audio files in posts: the format and declared duration read from the
file's header and the caps kept before anything is sent (:mod:`.probe`), and the words
heard in it, offline by the packaged Whisper model (:mod:`.embedded`) or by any
OpenAI-compatible transcription server (:mod:`.openai_transcriber`); :mod:`.reader` ties
them together into a :class:`~zofia_engine.records.audio.Transcript`.

Importing this package loads nothing heavy: mutagen, the openai SDK and faster-whisper
are imported by the modules that use them.
"""
