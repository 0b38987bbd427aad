"""The ``[whatsapp]`` settings section."""

from __future__ import annotations

from pydantic import Field

from zofia_engine.config import SettingsSection

__all__ = ["PLATFORM", "WhatsAppSettings"]

PLATFORM = "whatsapp"


class WhatsAppSettings(SettingsSection):
    """The WhatsApp tipline (the Business Cloud API). The access token, the app secret
    (which signs every webhook delivery) and the webhook's verify token are read from the
    environment variables named here, never from the file.

    The webhook listens on ``listen:port`` (0: any free port) at ``path``; Meta must
    reach it over HTTPS (a reverse proxy in front). ``graph_url`` is the Graph API with its version.
    Outside a user's 24-hour customer-service window only a template may be sent:
    ``correction_template`` (a changed verdict) and ``card_template`` (a card that came
    after the window closed), each registered in ``template_languages`` (a chat in
    another language gets the first); an empty name sends nothing outside the window.
    """

    phone_number_id: str = ""
    access_token_env: str = "WHATSAPP_ACCESS_TOKEN"
    app_secret_env: str = "WHATSAPP_APP_SECRET"
    verify_token_env: str = "WHATSAPP_VERIFY_TOKEN"
    graph_url: str = "https://graph.facebook.com/v21.0"
    listen: str = "127.0.0.1"
    port: int = Field(8444, ge=0, le=65535)
    path: str = "/whatsapp/webhook"
    correction_template: str = "zofia_correction"
    card_template: str = "zofia_card_ready"
    template_languages: list[str] = Field(default_factory=lambda: ["en"])
