"""What the detectors report: a :class:`Finding` (a span and its kind), the placeholder that
replaces it, and the names of the kinds."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

PLACEHOLDER = "[REDACTED:{}]"
PLACED = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

# kind → (singular, plural) as the reply names them.
LABELS: dict[str, tuple[str, str]] = {
    "aws-access-key": ("AWS access key", "AWS access keys"),
    "aws-secret-key": ("AWS secret key", "AWS secret keys"),
    "github-token": ("GitHub token", "GitHub tokens"),
    "gitlab-token": ("GitLab token", "GitLab tokens"),
    "slack-token": ("Slack token", "Slack tokens"),
    "slack-webhook": ("Slack webhook URL", "Slack webhook URLs"),
    "stripe-key": ("Stripe key", "Stripe keys"),
    "openai-key": ("OpenAI key", "OpenAI keys"),
    "anthropic-key": ("Anthropic key", "Anthropic keys"),
    "google-api-key": ("Google API key", "Google API keys"),
    "sendgrid-key": ("SendGrid key", "SendGrid keys"),
    "twilio-key": ("Twilio key", "Twilio keys"),
    "npm-token": ("npm token", "npm tokens"),
    "pypi-token": ("PyPI token", "PyPI tokens"),
    "discord-token": ("Discord bot token", "Discord bot tokens"),
    "azure-storage-key": ("Azure storage key", "Azure storage keys"),
    "mailchimp-key": ("Mailchimp key", "Mailchimp keys"),
    "square-secret": ("Square OAuth secret", "Square OAuth secrets"),
    "telegram-token": ("Telegram bot token", "Telegram bot tokens"),
    "private-key": ("private key", "private keys"),
    "jwt": ("JWT", "JWTs"),
    "bearer-token": ("bearer token", "bearer tokens"),
    "basic-auth": ("basic-auth credential", "basic-auth credentials"),
    "password": ("password", "passwords"),
    "secret": ("secret", "secrets"),
    "token": ("token", "tokens"),
    "high-entropy": ("high-entropy value", "high-entropy values"),
}

# Which findings win an overlap: a provider's format says more than a name does.
PROVIDER, HEADER, ASSIGNED = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret at ``text[start:end]``, of ``kind``."""

    start: int
    end: int
    kind: str
    rank: int = PROVIDER


@dataclass(frozen=True, slots=True)
class Redacted:
    """A text with its secrets replaced, and how many of each kind were found."""

    text: str
    found: Mapping[str, int]

    @property
    def changed(self) -> bool:
        return bool(self.found)
