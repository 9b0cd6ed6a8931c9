"""E-mail: the question as plain text and HTML, its signed link, and for single-choice questions one link per
option (each opens the link's page with that option chosen; a GET never answers). Django's mail framework,
configured by EMAIL_URL; one mail per recipient, so each link names the person it was sent to.
"""

from __future__ import annotations

import smtplib
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.template.loader import render_to_string

from notify.sending import Failed
from questions import links
from questions.models import Question


def configured() -> bool:
    return settings.HOOKBRIDGE_EMAIL_CONFIGURED


@dataclass(frozen=True)
class Mail:
    to: str
    subject: str
    text: str
    html: str


def mails(question: Question, recipients: list[str]) -> list[Mail]:
    made = []
    for to in recipients:
        options = []
        if question.kind == "question" and question.options:
            options = [
                (option["label"], links.url(question.pk, to, option=str(option["value"])))
                for option in question.options
            ]
        context = {"question": question, "link": links.url(question.pk, to), "options": options}
        subject = f"{question.asker_name} asks: {question.short_title}"
        made.append(
            Mail(
                to,
                subject,
                render_to_string("notify/email.txt", context),
                render_to_string("notify/email.html", context),
            )
        )
    return made


def send(mail_list: list[Mail]) -> None:
    """Every mail over one connection; a refused address is permanent, a server that cannot be reached is not."""
    try:
        with get_connection() as connection:
            for mail in mail_list:
                message = EmailMultiAlternatives(
                    mail.subject, mail.text, settings.HOOKBRIDGE_EMAIL_FROM, [mail.to], connection=connection
                )
                message.attach_alternative(mail.html, "text/html")
                message.send()
    except (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused) as exc:
        raise Failed(f"the mail server refused it: {exc}", permanent=True) from None
    except smtplib.SMTPAuthenticationError as exc:
        raise Failed(f"the mail server refused the login: {exc.smtp_code}", permanent=True) from None
    except (smtplib.SMTPException, OSError) as exc:
        raise Failed(f"the mail server could not take it: {exc}", permanent=False) from None
