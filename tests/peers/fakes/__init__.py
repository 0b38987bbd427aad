"""In-process fakes at our own ports (a ``Checker``, the panel's script at
``LLMBackend.complete``, an NLI model built on disk, the Telegram pacer's turns): where no
protocol is crossed, so no server is needed."""
