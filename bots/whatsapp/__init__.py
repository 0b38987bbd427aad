"""The WhatsApp tipline: a thin sender on the check service's front door, over the
WhatsApp Business Cloud API (docs/whatsapp.md)."""
