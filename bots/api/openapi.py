"""The API's OpenAPI 3.1 document, served at ``/v1/openapi.json``: its schemas are the
JSON schemas of the models the handlers validate with (:mod:`.models`), so the two
cannot differ; its examples are checked against the same models by the tests."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .models import (
    Accepted,
    CheckIn,
    CheckState,
    Problem,
    VoteState,
    WebhookCall,
    WebhookIn,
    WebhookSet,
)

__all__ = ["EXAMPLES", "OPENAPI_PATH", "openapi_document"]

OPENAPI_PATH = "/v1/openapi.json"
_REF = "#/components/schemas/{model}"
_CHECK_ID = "Zq3mP8xK2vLwT0aB"
_VOTE = {
    "category": "info",
    "truth_score": 1,
    "verdict": "false",
    "sure": True,
    "reviewed": False,
}
#: an example of each body, by the model it is one of (the tests validate each)
EXAMPLES: dict[type[BaseModel], dict[str, Any]] = {
    CheckIn: {
        "text": "The city council of Springfield banned bicycles from every street in March.",
        "language": "pt",
        "published": "2026-03-24",
        "asker": "user-5d41402a",
    },
    Accepted: {"id": _CHECK_ID, "status": "queued", "poll": f"/v1/checks/{_CHECK_ID}"},
    CheckState: {
        "id": _CHECK_ID,
        "status": "done",
        "created_at": "2026-03-25T09:30:00Z",
        "repeat": None,
        "report": {"verdict": "false", "summary": "The council's minutes record no ban."},
        "vote": _VOTE,
        "page": f"https://factcheck.example.org/c/{_CHECK_ID}",
        "error": "",
    },
    VoteState: {"id": _CHECK_ID, "status": "done", "vote": _VOTE, "error": ""},
    Problem: {"error": "Too many checks for now: please try again in 40 s."},
    WebhookIn: {"url": "https://hooks.example.org/zofia"},
    WebhookSet: {"url": "https://hooks.example.org/zofia", "secret": "whsec_3q2-7Wd0kLpX"},
}
EXAMPLES[WebhookCall] = {"event": "done", "call": "c4Lr9aQ2", "check": EXAMPLES[CheckState]}
_SIGNED = (
    "t=<unix time>,v1=<hex HMAC-SHA256 of '<t>.<body>' under the key's webhook secret>; "
    "docs/api.md says how to check it."
)
_REFUSALS = {
    "400": "The body is not JSON, or not a check (the sentence names the field).",
    "401": "No key, or one that is unknown or revoked.",
    "413": "The body is larger than the server takes ([api] max_body_bytes).",
    "415": "The body is not sent as application/json.",
    "422": "The post cannot be checked (a link that cannot be fetched, an image refused).",
    "429": "A limit of the key, its asker or the deployment; come back after Retry-After.",
}


def _ref(model: type[BaseModel]) -> dict[str, Any]:
    return {"$ref": _REF.format(model=model.__name__)}


def _json(model: type[BaseModel], description: str) -> dict[str, Any]:
    media = {"schema": _ref(model), "example": EXAMPLES[model]}
    return {"description": description, "content": {"application/json": media}}


def _problem(code: str) -> dict[str, Any]:
    response = _json(Problem, _REFUSALS[code])
    if code == "429":
        seconds = {"schema": {"type": "integer", "minimum": 1}}
        response["headers"] = {"Retry-After": {"description": "Seconds to wait.", **seconds}}
    if code == "401":
        response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
    return response


def _submit(summary: str, answered: type[BaseModel], poll: str) -> dict[str, Any]:
    accepted = _json(Accepted, f"Taken; the answer will be at {poll}.")
    accepted["headers"] = {"Location": {"schema": {"type": "string"}}}
    body = {"schema": _ref(CheckIn), "example": EXAMPLES[CheckIn]}
    return {
        "summary": summary,
        "requestBody": {"required": True, "content": {"application/json": body}},
        "responses": {
            "200": _json(answered, "Answered at once, from an earlier check of the post."),
            "202": accepted,
            **{code: _problem(code) for code in ("400", "401", "413", "415", "422", "429")},
        },
    }


def _read(summary: str, answer: type[BaseModel]) -> dict[str, Any]:
    return {
        "summary": summary,
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
        ],
        "responses": {
            "200": _json(answer, "The check's status, and its answer once done."),
            "401": _problem("401"),
            "404": _json(Problem, "No check of this key has this id."),
        },
    }


def _webhook() -> dict[str, Any]:
    body = {"schema": _ref(WebhookIn), "example": EXAMPLES[WebhookIn]}
    return {
        "summary": "Register the key's webhook (an empty url: none); a new signing secret.",
        "requestBody": {"required": True, "content": {"application/json": body}},
        "responses": {
            "200": _json(WebhookSet, "Registered; the secret is shown only here."),
            "400": _problem("400"),
            "401": _problem("401"),
        },
    }


def _callback() -> dict[str, Any]:
    headers = {
        name: {"in": "header", "name": name, "required": True, "schema": {"type": "string"}}
        for name in ("Zofia-Event", "Zofia-Call")
    }
    signature = {"in": "header", "name": "Zofia-Signature", "required": True}
    signature |= {"description": _SIGNED, "schema": {"type": "string"}}
    body = {"schema": _ref(WebhookCall), "example": EXAMPLES[WebhookCall]}
    return {
        "post": {
            "summary": "A check ended (done) or its verdict was corrected (corrected).",
            "parameters": [*headers.values(), signature],
            "requestBody": {"required": True, "content": {"application/json": body}},
            "responses": {"2XX": {"description": "Taken; anything else is retried."}},
        }
    }


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The document (built once; treat it as read-only)."""
    models: list[type[BaseModel]] = [
        CheckIn,
        Accepted,
        CheckState,
        VoteState,
        Problem,
        WebhookIn,
        WebhookSet,
        WebhookCall,
    ]
    _, top = models_json_schema([(model, "validation") for model in models], ref_template=_REF)
    document = {"description": "This document.", "content": {"application/json": {}}}
    own = {"summary": "This document.", "security": [], "responses": {"200": document}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ZoFia fact-check API",
            "version": "1",
            "description": "Checks and votes for tiplines; see docs/api.md.",
        },
        "security": [{"bearer": []}],
        "paths": {
            "/v1/checks": {"post": _submit("Check a post.", CheckState, "/v1/checks/{id}")},
            "/v1/checks/{id}": {"get": _read("A check and its report.", CheckState)},
            "/v1/votes": {"post": _submit("Vote on a message.", VoteState, "/v1/votes/{id}")},
            "/v1/votes/{id}": {"get": _read("A vote on a message.", VoteState)},
            "/v1/webhook": {"put": _webhook()},
            OPENAPI_PATH: {"get": own},
        },
        "webhooks": {"check": _callback()},
        "components": {
            "schemas": top["$defs"],
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
