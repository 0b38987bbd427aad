"""Keeping text from posts and web pages from becoming chat-role tokens.

A chat template turns messages into one string with control tokens between them
(``<|im_start|>system``, ``<|start_header_id|>``, ``[INST]``). A server, or the
embedded backend, then tokenises that string with special tokens parsed, so a post
that contains ``<|im_end|>\\n<|im_start|>system`` would close its own message and
open a forged system turn. :func:`defuse` breaks every such string with a word
joiner (U+2060) after its first character: a reader sees the same text, a tokenizer
sees plain characters.

:data:`TEMPLATE_TOKENS` matches the control strings of the common template
families (ChatML and Qwen, Llama 2 and 3, Mistral, DeepSeek, Gemma, the reasoning and
tool tags), and any bracketed control word in capitals (``[SOME_TOKEN]``), for text sent
to any server; :func:`vocabulary_pattern` matches exactly
the control and user-defined tokens of a loaded GGUF vocabulary.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["TEMPLATE_TOKENS", "defuse", "vocabulary_pattern"]

JOINER = "\u2060"

TEMPLATE_TOKENS = re.compile(
    r"<\|[^<>|\n]{1,48}\|>"  # ChatML, Qwen, Llama 3, Phi: <|im_start|>, <|eot_id|>
    r"|<｜[^<>｜\n]{1,48}｜>"  # DeepSeek: <｜begin▁of▁sentence｜>
    r"|</?s>|\[/?INST\]|<</?SYS>>"  # Llama 2, Mistral
    # Mistral v7 and its tool and reasoning tokens: [SYSTEM_PROMPT], [/SYSTEM_PROMPT],
    # [TOOL_CALLS], [AVAILABLE_TOOLS], [/AVAILABLE_TOOLS], [TOOL_RESULTS], [THINK] …
    r"|\[/?(?:SYSTEM_PROMPT|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS|TOOL_CONTENT|THINK"
    r"|IMG|IMG_BREAK|IMG_END|PREFIX|MIDDLE|SUFFIX|ARGS|CALL_ID)\]"
    # Tool-call and reasoning tags of Qwen, DeepSeek, Hermes and others
    r"|</?(?:think|tool_call|tool_response|tools|function_call|functions)>"
    # Gemma: <bos>, <eos>, <pad>, <unk>, <mask>, <start_of_turn>, <end_of_image> …
    r"|<(?:bos|eos|pad|unk|mask|(?:start|end)_of_(?:turn|image)|image_soft_token)>"
    r"|<\|?(?:system|user|assistant)\|?>"
    # Any other bracketed control word in capitals ([SOME_TOKEN], [/SOME_TOKEN]): the
    # form Mistral's tokens take, named or not yet named; case-sensitive, so "[Note]" and
    # "[web-1]" stay as they are.
    r"|(?-i:\[/?[A-Z][A-Z_]{2,30}\])",
    re.IGNORECASE,
)


def defuse(text: str, pattern: re.Pattern[str] = TEMPLATE_TOKENS) -> str:
    """``text`` with every match of ``pattern`` broken by a word joiner after its first
    character, so that no tokenizer reads it as a control token."""
    return pattern.sub(lambda m: m.group(0)[0] + JOINER + m.group(0)[1:], text)


def vocabulary_pattern(llm: Llama) -> re.Pattern[str] | None:
    """A pattern of the texts of ``llm``'s control and user-defined tokens (longest
    first), or ``None`` when it has none that could appear in text."""
    import llama_cpp

    model = llm._model  # llama-cpp-python's own vocabulary accessors
    flags = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED
    texts = set()
    for token in range(llm.n_vocab()):
        if model.token_get_attr(token) & flags:
            text = model.token_get_text(token)
            if len(text) > 1 and not text.isspace():
                texts.add(text)
    if not texts:
        return None
    return re.compile("|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True)))
